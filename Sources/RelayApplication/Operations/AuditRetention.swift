package import Foundation
package import RelayCore
package import RelayStore

/// Prunes audit records older than `[audit] retention_days`, so that what remains still verifies.
///
/// ### Overview
/// For each chain, ``plan(chain:now:)`` walks the stored records in order from where the chain starts and finds the
/// newest record of the unbroken run older than the cutoff; ``apply(_:now:)`` then signs a checkpoint at that
/// record (when a signing key is configured) and calls ``RelayStore/PushStore/pruneAudit(to:)``, which deletes the
/// run and keeps that record's seq and link as the chain's anchor. A verifier starts from the anchor, and the signed
/// checkpoint at the anchor lets an auditor check that the anchor itself is one the key holder saw.
///
/// The walk stops at the first record that is not old enough, even if later ones are (a clock stepped back): only a
/// prefix of a chain can go, since a gap in the middle would read as deleted records. Memory stays bounded: records
/// are read a page at a time and only the newest candidate is kept.
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
    package struct Plan: Sendable, Equatable {
        package var chain: String
        /// The first record that goes.
        package var firstSeq: Int64
        /// The last record that goes: the chain's new anchor.
        package var anchor: AuditAnchor
        /// How many records go.
        package var records: Int
        /// Records older than this go: milliseconds since 1970.
        package var cutoffMillis: Int64
    }

    /// What pruning `chain` at `now` would remove; `nil` when nothing is old enough.
    package func plan(chain: String, now: Date) async throws -> Plan? {
        let cutoff = AuditTime.millis(now.addingTimeInterval(-retention))
        let start = try await store.auditAnchor(chain: chain) ?? .genesis(chain: chain)
        var newest: AuditRecord?
        var firstSeq: Int64?
        var count = 0
        var position: Int64 = 0
        paging: while true {
            let page = try await store.auditRecords(chain: chain, after: position, limit: pageSize)
            for stored in page {
                guard stored.record.timeMillis < cutoff else { break paging }
                if firstSeq == nil { firstSeq = stored.record.seq }
                newest = stored.record
                count += 1
            }
            guard let last = page.last, page.count == pageSize else { break }
            position = last.position
        }
        guard let newest, let firstSeq, newest.seq > start.seq else { return nil }
        return Plan(
            chain: chain,
            firstSeq: firstSeq,
            anchor: AuditAnchor(chain: chain, seq: newest.seq, link: newest.link),
            records: count,
            cutoffMillis: cutoff
        )
    }

    /// Prunes as `plan` says: first a checkpoint signed at the new anchor (when a signing key is configured), then
    /// the records.
    ///
    /// - Returns: How many records the store deleted.
    @discardableResult
    package func apply(_ plan: Plan, now: Date) async throws -> Int {
        if let signingKey {
            let checkpoint = signingKey.checkpoint(
                chain: plan.chain, seq: plan.anchor.seq, link: plan.anchor.link, time: now
            )
            try await store.commit(StoreBatch(checkpoints: [checkpoint]))
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
        let span =
            plan.firstSeq == plan.anchor.seq
            ? "record \(plan.firstSeq)" : "records \(plan.firstSeq)…\(plan.anchor.seq)"
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
            detail: "pruned \(span) of chain \(plan.chain) (older than \(retentionDays) days, before \(cutoff))"
        )
    }
}
