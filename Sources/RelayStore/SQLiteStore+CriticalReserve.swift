import GRDB

/// The critical reserve's counts: one row per tenant and UTC hour in `critical_reserve`, read and written in one
/// write transaction, which SQLite runs alone (other processes on the file wait for it), so that the count never
/// grants more than the limit.
extension SQLiteStore {
    package func takeCriticalReserve(tenantID: String, hour: Int64, count: Int, limit: Int) async throws -> Int {
        guard count > 0 else { return 0 }
        return try await writer.write { db in
            let used = try Int.fetchOne(
                db,
                sql: "SELECT used FROM critical_reserve WHERE tenant_id = ? AND hour = ?",
                arguments: [tenantID, hour]
            )
            if used == nil {
                // The tenant's first take of this hour: its old hours are not asked for any more.
                try db.execute(
                    sql: "DELETE FROM critical_reserve WHERE tenant_id = ? AND hour < ?",
                    arguments: [tenantID, hour - Self.criticalReserveRetentionHours]
                )
            }
            let granted = Self.criticalReserveGrant(count: count, limit: limit, used: used ?? 0)
            if granted > 0 {
                try db.execute(
                    sql: """
                        INSERT INTO critical_reserve (tenant_id, hour, used) VALUES (?, ?, ?)
                        ON CONFLICT (tenant_id, hour) DO UPDATE SET used = used + excluded.used
                        """,
                    arguments: [tenantID, hour, granted]
                )
            }
            return granted
        }
    }

    package func criticalReserveUsed(tenantID: String, hour: Int64) async throws -> Int {
        try await writer.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT used FROM critical_reserve WHERE tenant_id = ? AND hour = ?",
                arguments: [tenantID, hour]
            ) ?? 0
        }
    }
}
