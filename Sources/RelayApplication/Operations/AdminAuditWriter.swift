package import Foundation
package import RelayCore
package import RelayStore

/// Appends records to an audit chain that no running relay writes: the chain of the command-line tools,
/// `<instance>:cli`.
///
/// ### Overview
/// Each ``append(_:)`` reads the chain's head from the store, links the entries onto it (``AuditChain``), and
/// commits them in one transaction, together with a checkpoint signed at the new head when a signing key is
/// configured, so the chain verifies to its end after every command.
///
/// ### Implementation
/// Several commands may write the same chain at once (two operators, a script). Both then read the same head and
/// link their records to the same seq; the store's unique `(chain, seq)` lets only the first commit through. When a
/// commit fails and the head has moved meanwhile, the entries are linked again onto the new head and committed again,
/// up to `maxAttempts` times; when the head has not moved the failure was something else, and it is thrown.
///
/// The relay's own chain is never written here: the relay's ``CommitQueue`` keeps that chain's head in memory, and a
/// record appended behind its back would make its next commit fail.
package struct AdminAuditWriter: Sendable {
    package let store: any PushStore
    package let chain: String
    /// Who the records name: `cli:<unix user>`.
    package let actor: String
    package let signingKey: AuditSigningKey?
    /// With `false` (`[audit] enabled = false`), nothing is written.
    package let enabled: Bool
    let maxAttempts: Int
    let now: @Sendable () -> Date

    package init(
        store: any PushStore,
        chain: String,
        actor: String,
        signingKey: AuditSigningKey?,
        enabled: Bool = true,
        maxAttempts: Int = 5,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.store = store
        self.chain = chain
        self.actor = actor
        self.signingKey = signingKey
        self.enabled = enabled
        self.maxAttempts = max(1, maxAttempts)
        self.now = now
    }

    /// The writer of a command-line tool: the configuration's `<instance>:cli` chain and signing key.
    package init(configuration: RelayConfiguration.Audit, store: any PushStore, actor: String) {
        self.init(
            store: store,
            chain: configuration.cliChain,
            actor: actor,
            signingKey: configuration.auditSigningKey,
            enabled: configuration.enabled
        )
    }

    /// Records one admin action (see ``RelayCore/AuditEntry/admin(_:actor:time:tenantID:keyID:before:after:detail:)``).
    ///
    /// - Returns: The stored record; `nil` when the audit log is off.
    @discardableResult
    package func record(
        _ action: String,
        tenantID: String? = nil,
        keyID: String? = nil,
        before: JSONValue? = nil,
        after: JSONValue? = nil,
        detail: String? = nil
    ) async throws -> AuditRecord? {
        let entry = AuditEntry.admin(
            action, actor: actor, time: now(), tenantID: tenantID, keyID: keyID, before: before, after: after,
            detail: detail
        )
        return try await append([entry]).first
    }

    /// Links `entries` onto the chain's stored head and commits them, with a signed checkpoint at the new head.
    ///
    /// - Returns: The stored records, in order; none when the audit log is off.
    /// - Throws: The store's error when the commit fails for a reason other than a concurrent writer, or still
    ///   fails after `maxAttempts` attempts.
    @discardableResult
    package func append(_ entries: [AuditEntry]) async throws -> [AuditRecord] {
        guard enabled, !entries.isEmpty else { return [] }
        // Normalised once, so every attempt links the entries as the store will read them back.
        let normalised = entries.map { $0.normalisedForStorage() }
        var attempt = 1
        while true {
            let head = try await store.auditHead(chain: chain)
            var links = AuditChain(chain: chain, head: head)
            let records = normalised.map { links.append($0) }
            var batch = StoreBatch(audit: records)
            if let signingKey {
                let end = links.head
                batch.checkpoints = [signingKey.checkpoint(chain: chain, seq: end.seq, link: end.link, time: now())]
            }
            do {
                try await store.commit(batch)
                return records
            } catch {
                let moved = (try? await store.auditHead(chain: chain)) != head
                guard moved, attempt < maxAttempts else { throw error }
                attempt += 1
            }
        }
    }
}

/// The command line's audit log of tenant administration: its records go to the `<instance>:cli` chain.
extension AdminAuditWriter: AdminAuditSink {
    package func commit(_ entries: [AuditEntry]) async throws {
        try await append(entries)
    }
}
