import Foundation
import GRDB

extension SQLiteStore {
    private static let operatorColumns = "id, name, role, secret_hash, created_at, revoked_at"

    package func createOperator(_ record: OperatorRecord) async throws {
        try await writer.write { db in
            let nameTaken = try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM operators WHERE name = ?)",
                arguments: [record.name]
            )
            if nameTaken == true { throw StoreError.duplicate("operator \(record.name)") }
            do {
                try db.execute(
                    sql: "INSERT INTO operators (\(Self.operatorColumns)) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        record.id, record.name, record.role.rawValue, Data(record.secretHash),
                        record.createdAt.unixSeconds, record.revokedAt?.unixSeconds,
                    ]
                )
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreError.duplicate("operator \(record.name) (id \(record.id))")
            }
        }
    }

    package func operatorRecord(id: String) async throws -> OperatorRecord? {
        try await writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.operatorColumns) FROM operators WHERE id = ?")
            return try Row.fetchOne(statement, arguments: [id]).map(OperatorRecord.init(row:))
        }
    }

    package func operators() async throws -> [OperatorRecord] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.operatorColumns) FROM operators ORDER BY created_at, name")
                .map(OperatorRecord.init(row:))
        }
    }

    package func updateOperator(_ record: OperatorRecord) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE operators SET role = ?, revoked_at = ? WHERE id = ?",
                arguments: [record.role.rawValue, record.revokedAt?.unixSeconds, record.id]
            )
            guard db.changesCount > 0 else { throw StoreError.notFound("operator \(record.id)") }
        }
    }
}
