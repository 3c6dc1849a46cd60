package import RelayCore
package import RelayStore

/// Checks that archive files (``AuditArchive``) and the store hold one unbroken chain each: every archived section
/// starts where the one before it ends, and the live chain continues exactly from the last archived record.
///
/// ### Overview
/// Each file is verified on its own first (``AuditArchiveFile``: links, and a signed checkpoint at every section's
/// end). ``join(_:store:chains:)`` then puts each chain's sections in order, by the seq of their header's anchor, and
/// checks the seams: a section's anchor must be the previous section's last record (seq **and** link), and the
/// store's anchor (where the live chain starts, ``RelayStore/PushStore/auditAnchor(chain:)``) must be the last
/// archived record. Verifying the store's chain from that anchor, as `audit verify` does, then proves that its first
/// record is seq + 1 and links onto the archive's last link.
///
/// Records the archives start after (seq 1 to the first anchor) are a note, not a fault: `audit prune` and the
/// relay's retention delete old records without archiving them. A store that still holds archived records (its
/// pruning was interrupted) is accepted when its record at the archive's last seq has the archive's link: the links
/// chain every earlier record, so both copies are the same.
package enum AuditArchiveCheck {
    /// One archived section of a chain, in the file it came from.
    package struct Part: Sendable, Equatable {
        package var file: String
        /// The header's anchor: the record before the section.
        package var anchor: AuditAnchor
        package var verification: AuditVerification
    }

    /// How one chain's archived sections and its live part fit together.
    package struct Join: Sendable, Equatable {
        package var chain: String
        /// The chain's archived sections, in chain order.
        package var parts: [Part]
        /// Where the store's part starts; `nil` when the store does not hold the chain.
        package var storeAnchor: AuditAnchor?
        /// The first seam that does not fit, naming the chain and the seq; `nil` when everything fits.
        package var problem: String?
        /// Something an auditor should know that is not a fault (records before the archives, an overlap with the
        /// store).
        package var notes: [String] = []

        package var isJoined: Bool { problem == nil }

        /// `chain relay-1: archived records 1…12 (a.jsonl), the store continues from seq 13: joined`, or the
        /// problem.
        package var line: String {
            let files = parts.map(\.file).joined(separator: ", ")
            guard let problem else {
                let first = (parts.first?.anchor.seq ?? 0) + 1
                let last = parts.last?.verification.lastSeq ?? 0
                let span = first == last ? "record \(first)" : "records \(first)…\(last)"
                return "chain \(chain): archived \(span) (\(files)), the store continues from seq "
                    + "\((storeAnchor?.seq ?? 0) + 1): joined"
            }
            return "chain \(chain): NOT JOINED: \(problem)"
        }
    }

    /// Joins the sections of `files` with the store, one ``Join`` per chain the files hold (only `chains`, when
    /// given), in chain order.
    package static func join(
        _ files: [AuditArchiveFile], store: any PushStore, chains: [String]? = nil
    ) async throws -> [Join] {
        var parts: [String: [Part]] = [:]
        for file in files {
            for (anchor, verification) in zip(file.anchors, file.result.sections) {
                guard chains?.contains(verification.chain) ?? true else { continue }
                parts[verification.chain, default: []].append(
                    Part(file: file.path, anchor: anchor, verification: verification))
            }
        }
        let stored = Set(try await store.auditChains())
        var joins: [Join] = []
        for chain in parts.keys.sorted() {
            let ordered = (parts[chain] ?? []).sorted { $0.anchor.seq < $1.anchor.seq }
            var storeAnchor: AuditAnchor?
            if stored.contains(chain) {
                storeAnchor = try await store.auditAnchor(chain: chain) ?? .genesis(chain: chain)
            }
            var join = Join(chain: chain, parts: ordered, storeAnchor: storeAnchor)
            join.problem = seamProblem(ordered, chain: chain)
            if join.problem == nil {
                join.problem = try await storeProblem(
                    ordered, storeAnchor: storeAnchor, store: store, notes: &join.notes)
            }
            if let first = ordered.first, first.anchor.seq > 0 {
                join.notes.append(
                    "chain \(chain): \(AuditCut.span(1, first.anchor.seq)) \(are(1, first.anchor.seq)) in no archive "
                        + "given (pruned without archiving, or in another archive)")
            }
            joins.append(join)
        }
        return joins
    }

    /// The first section that does not verify or does not continue the one before it.
    static func seamProblem(_ parts: [Part], chain: String) -> String? {
        var previous: Part?
        for part in parts {
            if let problem = part.verification.problem {
                return "\(part.file): NOT INTACT at seq \(problem.seq): \(problem.message)"
            }
            defer { previous = part }
            guard let previous else { continue }
            let end = previous.verification.head
            if part.anchor.seq < end.seq {
                return "\(part.file) starts after seq \(part.anchor.seq) of chain \(chain), inside \(previous.file) "
                    + "(which ends at seq \(end.seq)): the archives overlap"
            }
            if part.anchor.seq > end.seq {
                let missing = AuditCut.span(end.seq + 1, part.anchor.seq)
                return "\(missing) of chain \(chain) \(are(end.seq + 1, part.anchor.seq)) in no archive given "
                    + "(\(previous.file) ends at seq \(end.seq), \(part.file) starts after seq \(part.anchor.seq))"
            }
            if part.anchor.link != end.link {
                return "\(part.file) starts after seq \(part.anchor.seq) of chain \(chain), but not from the link of "
                    + "that record in \(previous.file)"
            }
        }
        return nil
    }

    /// Whether the store's part of the chain starts where the last section ends.
    private static func storeProblem(
        _ parts: [Part], storeAnchor: AuditAnchor?, store: any PushStore, notes: inout [String]
    ) async throws -> String? {
        guard let last = parts.last else { return nil }
        let end = last.verification.head
        let chain = end.chain
        guard let storeAnchor else {
            return "the store holds no chain \(chain) (is this the store the archives were made from?)"
        }
        if storeAnchor.seq == end.seq {
            guard storeAnchor.link == end.link else {
                return "the store's chain \(chain) starts after seq \(end.seq), but not from the link of that record "
                    + "in \(last.file)"
            }
            return nil
        }
        if storeAnchor.seq > end.seq {
            let missing = AuditCut.span(end.seq + 1, storeAnchor.seq)
            return "\(missing) of chain \(chain) \(are(end.seq + 1, storeAnchor.seq)) neither in the archives "
                + "(\(last.file) ends at seq \(end.seq)) nor in the store (it starts after seq \(storeAnchor.seq))"
        }
        // The store still holds records the archive holds: both copies must have the same link at the archive's end.
        guard let stored = try await record(seq: end.seq, chain: chain, store: store) else {
            return "the store's chain \(chain) starts after seq \(storeAnchor.seq) but holds no record seq \(end.seq), "
                + "the last one in \(last.file)"
        }
        guard stored.link == end.link else {
            return "record seq \(end.seq) of chain \(chain) in the store differs from the one in \(last.file)"
        }
        notes.append(
            "chain \(chain): \(AuditCut.span(storeAnchor.seq + 1, end.seq)) \(are(storeAnchor.seq + 1, end.seq)) both "
                + "in \(last.file) and in the store (the archive's pruning did not finish)")
        return nil
    }

    /// `is` for one record, `are` for several.
    private static func are(_ first: Int64, _ last: Int64) -> String { first == last ? "is" : "are" }

    /// The stored record `seq` of `chain`, or `nil`.
    private static func record(seq: Int64, chain: String, store: any PushStore) async throws -> AuditRecord? {
        var position: Int64 = 0
        while true {
            let page = try await store.auditRecords(chain: chain, after: position, limit: 5_000)
            for stored in page where stored.record.seq >= seq {
                return stored.record.seq == seq ? stored.record : nil
            }
            guard let last = page.last, page.count == 5_000 else { return nil }
            position = last.position
        }
    }
}
