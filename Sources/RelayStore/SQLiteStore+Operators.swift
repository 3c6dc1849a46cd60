import Foundation
import GRDB
import RelayCore

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

    // MARK: - Usage

    package func usage(tenantID: String, fromDay: String) async throws -> [UsageRow] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT day, provider, delivered, token_invalid, rejected, rate_limited, failed, accepted
                    FROM usage_daily
                    WHERE tenant_id = ? AND day >= ? ORDER BY day, provider
                    """,
                arguments: [tenantID, fromDay]
            ).map { row in
                let name: String = try row.decode(forColumn: "provider")
                guard let provider = Provider(rawValue: name) else {
                    throw StoreError.unavailable("usage names an unknown provider \"\(name)\"")
                }
                return UsageRow(
                    day: try row.decode(forColumn: "day"),
                    provider: provider,
                    counts: UsageCounts(
                        delivered: try row.decode(forColumn: "delivered"),
                        tokenInvalid: try row.decode(forColumn: "token_invalid"),
                        rejected: try row.decode(forColumn: "rejected"),
                        rateLimited: try row.decode(forColumn: "rate_limited"),
                        failed: try row.decode(forColumn: "failed"),
                        accepted: try row.decode(forColumn: "accepted")
                    )
                )
            }
        }
    }

    // MARK: - Group commit

    package func commit(_ batch: StoreBatch) async throws {
        guard !batch.isEmpty else { return }
        try await writer.write { db in
            try Self.insert(batch.provisionalReceipts, db: db, replacing: false)
            try Self.insert(batch.receipts, db: db)
            for update in batch.receiptUpdates { try Self.apply(update, db: db) }
            try Self.add(batch.usage, db: db)
            try Self.append(batch.audit, db: db)
            try Self.insert(batch.checkpoints, db: db)
        }
    }

    /// Adds usage counters inside the caller's transaction.
    static func add(_ usage: [UsageKey: UsageCounts], db: Database) throws {
        guard !usage.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO usage_daily (tenant_id, day, provider, delivered, token_invalid, rejected, rate_limited,
                    failed, accepted)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (tenant_id, day, provider) DO UPDATE SET
                    delivered = delivered + excluded.delivered,
                    token_invalid = token_invalid + excluded.token_invalid,
                    rejected = rejected + excluded.rejected,
                    rate_limited = rate_limited + excluded.rate_limited,
                    failed = failed + excluded.failed,
                    accepted = accepted + excluded.accepted
                """
        )
        for (key, counts) in usage where !counts.isZero {
            try statement.execute(arguments: [
                key.tenantID, key.day, key.provider.rawValue, counts.delivered, counts.tokenInvalid, counts.rejected,
                counts.rateLimited, counts.failed, counts.accepted,
            ])
        }
    }
}
