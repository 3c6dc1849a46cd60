import PostgresNIO
import RelayCore
package import RelayStore

extension PostgresStore {
    package func usage(tenantID: String, fromDay: String) async throws -> [UsageRow] {
        try await rows(
            """
            SELECT day, provider, app, delivered, token_invalid, rejected, rate_limited, failed, accepted,
                not_admitted, critical
            FROM usage_daily WHERE tenant_id = \(tenantID) AND day >= \(fromDay)
            ORDER BY day, provider COLLATE "C", app <> 'default', app COLLATE "C"
            """
        ).map(UsageRow.init(row:))
    }

    /// Adds usage counters: one upsert per 1,000 rows, in key order (so concurrent commits cannot deadlock).
    static func usageStatements(_ usage: [UsageKey: UsageCounts]) -> [PostgresQuery] {
        let rows = usage.filter { !$0.value.isZero }.sorted {
            ($0.key.tenantID, $0.key.day, $0.key.provider.rawValue, $0.key.app) < (
                $1.key.tenantID, $1.key.day, $1.key.provider.rawValue, $1.key.app
            )
        }
        let width = 12
        return stride(from: 0, to: rows.count, by: rowsPerStatement).map { start in
            let chunk = rows[start..<min(start + rowsPerStatement, rows.count)]
            var binds = PostgresBindings(capacity: chunk.count * width)
            var values: [String] = []
            for (key, counts) in chunk {
                values.append(PostgresBindings.placeholders(from: binds.count + 1, count: width))
                binds.append(key.tenantID)
                binds.append(key.day)
                binds.append(key.provider.rawValue)
                binds.append(key.app)
                binds.append(counts.delivered)
                binds.append(counts.tokenInvalid)
                binds.append(counts.rejected)
                binds.append(counts.rateLimited)
                binds.append(counts.failed)
                binds.append(counts.accepted)
                binds.append(counts.notAdmitted)
                binds.append(counts.critical)
            }
            return .assembled(
                """
                INSERT INTO usage_daily AS u (tenant_id, day, provider, app, delivered, token_invalid, rejected,
                    rate_limited, failed, accepted, not_admitted, critical)
                VALUES \(values.joined(separator: ", "))
                ON CONFLICT (tenant_id, day, provider, app) DO UPDATE SET
                    delivered = u.delivered + EXCLUDED.delivered,
                    token_invalid = u.token_invalid + EXCLUDED.token_invalid,
                    rejected = u.rejected + EXCLUDED.rejected,
                    rate_limited = u.rate_limited + EXCLUDED.rate_limited,
                    failed = u.failed + EXCLUDED.failed,
                    accepted = u.accepted + EXCLUDED.accepted,
                    not_admitted = u.not_admitted + EXCLUDED.not_admitted,
                    critical = u.critical + EXCLUDED.critical
                """,
                binds: binds
            )
        }
    }
}
