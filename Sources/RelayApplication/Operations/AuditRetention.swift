package import Foundation
package import RelayCore
package import RelayStore

/// Prunes audit records older than `[audit] retention_days`, so that what remains still verifies.
///
/// ### Overview
/// For each chain, ``plan(chain:now:)`` finds the oldest run of records older than the cutoff (``AuditCut``, which
/// `audit archive` plans with too); ``apply(_:now:)`` then signs a checkpoint at the run's newest record (when a
/// signing key is configured) and calls ``RelayStore/PushStore/pruneAudit(to:)``, which deletes the run and keeps
/// that record's seq and link as the chain's anchor. A verifier starts from the anchor, and the signed checkpoint at
/// the anchor lets an auditor check that the anchor itself is one the key holder saw.
///
/// Pruning changes no record, so a running relay may go on appending to a chain while it is pruned. Who prunes also
/// records it: the relay through its commit queue, the command-line tools in their own chain
/// (``entry(for:actor:retentionDays:time:)``).
package struct AuditRetention: Sendable {
    package let store: any PushStore
    /// How long records are kept, in seconds.
    package let retention: Double
    package let signingKey: AuditSigningKey?
    /// The chains to prune; `nil` for every chain in the store.
    package let chains: [String]?
    let pageSize: Int

    package init(
        store: any PushStore,
        retention: Double,
        signingKey: AuditSigningKey?,
        chains: [String]? = nil,
        pageSize: Int = 5_000
    ) {
        self.store = store
        self.retention = retention
        self.signingKey = signingKey
        self.chains = chains
        self.pageSize = max(1, pageSize)
    }

    /// What pruning one chain removes.
    package typealias Plan = AuditCut

    /// What pruning `chain` at `now` would remove; `nil` when nothing is old enough.
    package func plan(chain: String, now: Date) async throws -> Plan? {
        try await AuditCut.plan(
            store: store, chain: chain, before: now.addingTimeInterval(-retention), pageSize: pageSize)
    }

    /// Prunes as `plan` says: first a checkpoint signed at the new anchor (when a signing key is configured), then
    /// the records.
    ///
    /// - Returns: How many records the store deleted.
    @discardableResult
    package func apply(_ plan: Plan, now: Date) async throws -> Int {
        if let signingKey {
            try await store.commit(StoreBatch(checkpoints: [plan.checkpoint(signedBy: signingKey, time: now)]))
        }
        return try await store.pruneAudit(to: plan.anchor)
    }

    /// Plans every chain (``chains``, or every chain in the store) and, unless `dryRun`, prunes them.
    ///
    /// - Returns: The plans of the chains that had something old enough, in chain order.
    package func run(now: Date, dryRun: Bool = false) async throws -> [Plan] {
        var plans: [Plan] = []
        let targets = try await store.auditChains(among: chains)
        for chain in targets {
            guard let plan = try await plan(chain: chain, now: now) else { continue }
            if !dryRun { try await apply(plan, now: now) }
            plans.append(plan)
        }
        return plans
    }

    /// The `retention` entry recording that `plan` was carried out.
    package static func entry(for plan: Plan, actor: String, retentionDays: Int, time: Date) -> AuditEntry {
        let cutoff = AuditTime.iso8601(millis: plan.cutoffMillis)
        return AuditEntry(
            timeMillis: AuditTime.millis(time),
            event: .retention,
            outcome: "audit.prune",
            actor: actor,
            after: .object([
                "chain": .string(plan.chain),
                "firstSeq": .int(plan.firstSeq),
                "lastSeq": .int(plan.anchor.seq),
                "records": .int(Int64(plan.records)),
                "olderThan": .string(cutoff),
            ]),
            detail: "pruned \(plan.span) of chain \(plan.chain) (older than \(retentionDays) days, before \(cutoff))"
        )
    }
}
