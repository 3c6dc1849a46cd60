/// What an audit record is about.
package enum AuditEvent: String, Sendable, Hashable, Codable, CaseIterable {
    /// One notification handed to a provider (or refused for itself, e.g. `CriticalAlertsNotAllowed`): one record
    /// per notification, with its outcome.
    case push
    /// A refused request, before any notification existed: authentication failure, rate limit, validation error,
    /// disabled tenant.
    case refused
    /// An operator's action (tenant or key changes), with `actor` and the `before`/`after` state.
    case admin
    /// Written when old records are pruned, so that the gap before the new first record is itself on the record.
    case retention
    /// A push request answered as a dry run (`"dryRun": true` or `Prefer: dry-run`): nothing was sent, counted or
    /// stored; one record per request, with counts by provider and refusal in `detail`, never a token or content.
    case dryRun
}
