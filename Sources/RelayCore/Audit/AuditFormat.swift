/// How audit records are shown for review.
package enum AuditFormat: String, Sendable, CaseIterable {
    /// One JSON object per line, keys sorted, time as ISO 8601 (see ``AuditRenderer``).
    case jsonl
    /// RFC 4180 CSV with a header row.
    case csv
    /// Fixed-width columns of the most useful fields, for a terminal.
    case table
}
