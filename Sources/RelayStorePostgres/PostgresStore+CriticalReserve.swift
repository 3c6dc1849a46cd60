import PostgresNIO
import RelayStore

/// The critical reserve's counts, shared by every relay on the database: one row per tenant and UTC hour in
/// `critical_reserve`.
extension PostgresStore {
    /// One transaction: the hour's row is made if missing, then locked (`FOR UPDATE`) and read, so that relays taking
    /// at once queue on the row and each sees what the others took; the grant is computed here and written back.
    package func takeCriticalReserve(tenantID: String, hour: Int64, count: Int, limit: Int) async throws -> Int {
        guard count > 0 else { return 0 }
        return try await transaction { transaction in
            // A second relay making the same row waits for the first one's commit, then makes nothing.
            let made = try await transaction.rows(
                """
                INSERT INTO critical_reserve (tenant_id, hour, used) VALUES (\(tenantID), \(hour), 0)
                ON CONFLICT (tenant_id, hour) DO NOTHING
                RETURNING hour
                """
            )
            let rows = try await transaction.rows(
                "SELECT used FROM critical_reserve WHERE tenant_id = \(tenantID) AND hour = \(hour) FOR UPDATE"
            )
            guard let row = rows.first else {
                throw StoreError.unavailable("the critical reserve of tenant \(tenantID) has no row for hour \(hour)")
            }
            let used = try row.decode(Int.self)
            let granted = Self.criticalReserveGrant(count: count, limit: limit, used: used)
            if granted > 0 {
                try await transaction.execute(
                    """
                    UPDATE critical_reserve SET used = used + \(granted)
                    WHERE tenant_id = \(tenantID) AND hour = \(hour)
                    """
                )
            }
            if !made.isEmpty {
                // The tenant's first take of this hour: its old hours are not asked for any more.
                let oldest = hour - Self.criticalReserveRetentionHours
                try await transaction.execute(
                    "DELETE FROM critical_reserve WHERE tenant_id = \(tenantID) AND hour < \(oldest)"
                )
            }
            return granted
        }
    }

    package func criticalReserveUsed(tenantID: String, hour: Int64) async throws -> Int {
        let rows = try await rows(
            "SELECT used FROM critical_reserve WHERE tenant_id = \(tenantID) AND hour = \(hour)"
        )
        return try rows.first?.decode(Int.self) ?? 0
    }
}
