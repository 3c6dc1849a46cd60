import GRDB
import RelayCore

extension SQLiteStore {
    package func usage(tenantID: String, fromDay: String) async throws -> [UsageRow] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT day, provider, app, delivered, token_invalid, rejected, rate_limited, failed, accepted,
                        not_admitted, critical
                    FROM usage_daily
                    WHERE tenant_id = ? AND day >= ? ORDER BY day, provider, app <> 'default', app
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
                        accepted: try row.decode(forColumn: "accepted"),
                        notAdmitted: try row.decode(forColumn: "not_admitted"),
                        critical: try row.decode(forColumn: "critical")
                    ),
                    app: try row.decode(forColumn: "app")
                )
            }
        }
    }

    /// Adds usage counters inside the caller's transaction.
    static func add(_ usage: [UsageKey: UsageCounts], db: Database) throws {
        guard !usage.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO usage_daily (tenant_id, day, provider, app, delivered, token_invalid, rejected,
                    rate_limited, failed, accepted, not_admitted, critical)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (tenant_id, day, provider, app) DO UPDATE SET
                    delivered = delivered + excluded.delivered,
                    token_invalid = token_invalid + excluded.token_invalid,
                    rejected = rejected + excluded.rejected,
                    rate_limited = rate_limited + excluded.rate_limited,
                    failed = failed + excluded.failed,
                    accepted = accepted + excluded.accepted,
                    not_admitted = not_admitted + excluded.not_admitted,
                    critical = critical + excluded.critical
                """
        )
        for (key, counts) in usage where !counts.isZero {
            try statement.execute(arguments: [
                key.tenantID, key.day, key.provider.rawValue, key.app, counts.delivered, counts.tokenInvalid,
                counts.rejected, counts.rateLimited, counts.failed, counts.accepted, counts.notAdmitted,
                counts.critical,
            ])
        }
    }
}
