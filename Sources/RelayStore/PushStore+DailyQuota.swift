package import Foundation

extension PushStore {
    /// Notifications the tenant's daily quota counted on the UTC day of `date`, as the store has them: every
    /// notification in that day's usage except those of requests refused whole (``UsageCounts/quotaUsed``).
    ///
    /// A relay alone on its store (SQLite) starts each tenant's day from this and counts in memory from then on.
    /// Notifications are in it once their outcome (or Expo's ticket) is committed: not those still on their way.
    package func quotaUsed(tenantID: String, on date: Date) async throws -> Int {
        let day = UsageKey.day(of: date)
        return try await usage(tenantID: tenantID, fromDay: day).reduce(0) { used, row in
            used + (row.day == day ? row.counts.quotaUsed : 0)
        }
    }
}
