package import RelayCore

/// Where ``TenantAdministration`` writes the audit records of its changes, and whom they name.
///
/// The command line appends to its own chain (``AdminAuditWriter``, actor `cli:<unix user>`); the admin API commits
/// through the relay's ``CommitQueue`` (actor `operator:<name>`, with the request's id and client). The records
/// themselves are made by ``TenantAdministration`` alone, so both front ends write the same ones.
package protocol AdminAuditSink: Sendable {
    /// Who the records name.
    var actor: String { get }

    /// Stores `entries` in order; returns once they are durable.
    func commit(_ entries: [AuditEntry]) async throws
}
