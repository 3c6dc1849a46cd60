import Foundation
import PostgresNIO
package import RelayStore

extension PostgresStore {
    private static let operatorColumns = "id, name, role, secret_hash, created_at, revoked_at"

    package func createOperator(_ record: OperatorRecord) async throws {
        do {
            try await execute(
                """
                INSERT INTO operators (\(unescaped: Self.operatorColumns))
                VALUES (\(record.id), \(record.name), \(record.role.rawValue), \(ByteBuffer(bytes: record.secretHash)),
                    \(record.createdAt.unixSeconds), \(record.revokedAt?.unixSeconds))
                """
            )
        } catch let error as PostgresStoreError where error.violates(.unique, constraint: "operators_name_key") {
            throw StoreError.duplicate("operator \(record.name)")
        } catch let error as PostgresStoreError where error.violates(.unique) {
            throw StoreError.duplicate("operator \(record.name) (id \(record.id))")
        }
    }

    package func operatorRecord(id: String) async throws -> OperatorRecord? {
        try await rows("SELECT \(unescaped: Self.operatorColumns) FROM operators WHERE id = \(id)")
            .first.map(OperatorRecord.init(row:))
    }

    package func operators() async throws -> [OperatorRecord] {
        try await rows(
            "SELECT \(unescaped: Self.operatorColumns) FROM operators ORDER BY created_at, name COLLATE \"C\""
        ).map(OperatorRecord.init(row:))
    }

    package func updateOperator(_ record: OperatorRecord) async throws {
        let updated = try await rows(
            """
            UPDATE operators SET role = \(record.role.rawValue), revoked_at = \(record.revokedAt?.unixSeconds)
            WHERE id = \(record.id)
            RETURNING id
            """
        )
        guard !updated.isEmpty else { throw StoreError.notFound("operator \(record.id)") }
    }
}
