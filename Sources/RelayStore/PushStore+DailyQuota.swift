package import Foundation

extension PushStore {
    /// Notifications the tenant's daily quota counted on the UTC day of `date`, as the store has them: every
    /// notification in that day's usage except those of requests refused whole (``UsageCounts/quotaUsed``), plus the
    /// tenant's notifications in the delivery journal.
    ///
    /// A relay alone on its store (SQLite) starts each tenant's day from this and counts in memory from then on.
    /// Usage has a notification once its outcome (or Expo's ticket) is committed; until then a notification answered
    /// pending, or accepted asynchronously, is in the journal instead (the commit that concludes it deletes its entry
    /// and counts its usage), so a relay that restarts after a crash counts what it resumes. Entries are counted
    /// whatever their day: each lands in usage on the day it is concluded, today or later.
    package func quotaUsed(tenantID: String, on date: Date) async throws -> Int {
        // The journal before the usage: a notification concluded between the two reads then counts twice (too many,
        // never too few), where the other order would miss it.
        let journaled = try await journalStatistics(tenantID: tenantID).entries
        let day = UsageKey.day(of: date)
        return try await usage(tenantID: tenantID, fromDay: day).reduce(journaled) { used, row in
            used + (row.day == day ? row.counts.quotaUsed : 0)
        }
    }
}
