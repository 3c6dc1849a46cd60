package import Foundation
package import RelayCore
package import RelayStore

/// The oldest run of one chain's records, all stamped before a cutoff: what `audit prune` deletes and what
/// `audit archive` moves to a file.
///
/// ### Overview
/// ``plan(store:chain:before:pageSize:)`` walks the stored records in order from where the chain starts and finds
/// the newest record of the unbroken run older than the cutoff. That record is the **cut**: it becomes the chain's
/// anchor once the run is gone (``RelayStore/PushStore/pruneAudit(to:)`` keeps its seq and link), and a checkpoint
/// signed at it (``checkpoint(signedBy:time:)``) lets an auditor check that the anchor is one the key holder saw,
/// and, for an archive, that the file ends exactly where the live chain continues.
///
/// The walk stops at the first record that is not old enough, even if later ones are (a clock stepped back): only a
/// prefix of a chain can go, since a gap in the middle would read as deleted records. Memory stays bounded: records
/// are read a page at a time and only the newest candidate is kept. A running relay may go on appending to the chain
/// meanwhile: it appends after the head, never inside the prefix.
package struct AuditCut: Sendable, Equatable {
    package var chain: String
    /// The first record that goes.
    package var firstSeq: Int64
    /// The last record that goes: the chain's new anchor.
    package var anchor: AuditAnchor
    /// How many records go.
    package var records: Int
    /// Records older than this go: milliseconds since 1970.
    package var cutoffMillis: Int64

    package init(chain: String, firstSeq: Int64, anchor: AuditAnchor, records: Int, cutoffMillis: Int64) {
        self.chain = chain
        self.firstSeq = firstSeq
        self.anchor = anchor
        self.records = records
        self.cutoffMillis = cutoffMillis
    }

    /// `record 12` or `records 1…12`.
    package var span: String { Self.span(firstSeq, anchor.seq) }

    /// `record 12` when `first` is `last`, else `records 1…12`.
    package static func span(_ first: Int64, _ last: Int64) -> String {
        first == last ? "record \(first)" : "records \(first)…\(last)"
    }

    /// What cutting `chain` before `cutoff` would remove; `nil` when no record before the chain's anchor is older.
    ///
    /// - Parameter pageSize: Records read per query.
    package static func plan(
        store: any PushStore, chain: String, before cutoff: Date, pageSize: Int = 5_000
    ) async throws -> AuditCut? {
        let cutoffMillis = AuditTime.millis(cutoff)
        let pageSize = max(1, pageSize)
        let start = try await store.auditAnchor(chain: chain) ?? .genesis(chain: chain)
        var newest: AuditRecord?
        var firstSeq: Int64?
        var count = 0
        var position: Int64 = 0
        paging: while true {
            let page = try await store.auditRecords(chain: chain, after: position, limit: pageSize)
            for stored in page {
                guard stored.record.timeMillis < cutoffMillis else { break paging }
                if firstSeq == nil { firstSeq = stored.record.seq }
                newest = stored.record
                count += 1
            }
            guard let last = page.last, page.count == pageSize else { break }
            position = last.position
        }
        guard let newest, let firstSeq, newest.seq > start.seq else { return nil }
        return AuditCut(
            chain: chain,
            firstSeq: firstSeq,
            anchor: AuditAnchor(chain: chain, seq: newest.seq, link: newest.link),
            records: count,
            cutoffMillis: cutoffMillis
        )
    }

    /// Plans the cut of every chain in `chains` (every chain in the store when `nil`) that has something older than
    /// `cutoff`, in chain order.
    package static func plans(
        store: any PushStore, chains: [String]?, before cutoff: Date, pageSize: Int = 5_000
    ) async throws -> [AuditCut] {
        var cuts: [AuditCut] = []
        for chain in try await store.auditChains(among: chains) {
            if let cut = try await plan(store: store, chain: chain, before: cutoff, pageSize: pageSize) {
                cuts.append(cut)
            }
        }
        return cuts
    }

    /// The checkpoint that signs the cut record, the chain's anchor to be.
    package func checkpoint(signedBy key: AuditSigningKey, time: Date) -> AuditCheckpoint {
        key.checkpoint(chain: chain, seq: anchor.seq, link: anchor.link, time: time)
    }
}
