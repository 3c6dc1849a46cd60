package import Foundation

/// Which records to show: the reference semantics of audit queries.
///
/// Every condition that is set must hold; an unset one (`nil`) holds for every record. The store translates a
/// filter into its query language; this in-memory `matches` is what that translation must agree with.
/// - `tenantID`, `outcome`, `event`: equal.
/// - `critical`: equal, so records without criticality (admin, refused, retention) match neither `true` nor `false`.
/// - `since` / `until`: the half-open range `[since, until)`, compared at millisecond precision: both bounds are
///   rounded to the nearest millisecond like record times (``sinceMillis``, ``untilMillis``), so a record stamped
///   exactly `since` is included and one stamped exactly `until` is not.
package struct AuditFilter: Sendable, Equatable {
    package var tenantID: String?
    package var since: Date?
    package var until: Date?
    package var outcome: String?
    package var critical: Bool?
    package var event: AuditEvent?

    package init(
        tenantID: String? = nil, since: Date? = nil, until: Date? = nil, outcome: String? = nil,
        critical: Bool? = nil, event: AuditEvent? = nil
    ) {
        self.tenantID = tenantID
        self.since = since
        self.until = until
        self.outcome = outcome
        self.critical = critical
        self.event = event
    }

    /// The inclusive lower bound in milliseconds, as a store should compare it.
    package var sinceMillis: Int64? { since.map(AuditTime.millis) }
    /// The exclusive upper bound in milliseconds, as a store should compare it.
    package var untilMillis: Int64? { until.map(AuditTime.millis) }

    package func matches(_ record: AuditRecord) -> Bool {
        if let tenantID, record.tenantID != tenantID { return false }
        if let sinceMillis, record.timeMillis < sinceMillis { return false }
        if let untilMillis, record.timeMillis >= untilMillis { return false }
        if let outcome, record.outcome != outcome { return false }
        if let critical, record.critical != critical { return false }
        if let event, record.event != event { return false }
        return true
    }
}
