package import Foundation
package import RelayCore
package import RelayStore

/// Writes the audit export format (``RelayCore/AuditExportLine``) for a time range, one section per chain.
///
/// ### Overview
/// For each chain the range is one **contiguous** stretch: from the first record stamped at or after `since` to the
/// last one before the first record stamped at or after `until`, in stored order. A section is a header whose anchor
/// is the record before the stretch (or the chain's start), the records, each stored checkpoint right after the
/// record it signs, and, when a signing key is configured and the relay had not signed the stretch's last record, an
/// `exportCheckpoint` line signed now at that record, so the section verifies to its end with the public key alone.
/// That signature is marked as made at export time (``RelayCore/AuditCheckpoint/madeAtExport``, bound into the
/// signed bytes) and verifiers count it apart from the relay's own checkpoints. Filtering by tenant is impossible by
/// design: leaving records out would break the links.
///
/// ### Implementation
/// Each chain is walked from where it starts, page by page, and every record is verified on the way
/// (``RelayCore/AuditVerifier``, with the stored checkpoints and the signing key's public half). A chain that does
/// not verify up to the end of the stretch stops the export with ``Failure/notIntact(_:)`` before anything is
/// signed: the export's fresh checkpoint must never vouch for records that were altered in the store. Memory stays
/// bounded by the page size and the chain's checkpoints.
///
/// With a signing key, only checkpoints signed by that key are exported, so the file verifies with its public half;
/// without one, every stored checkpoint is, and the end of each section is covered only if a stored checkpoint
/// happens to sign it.
package struct AuditExport: Sendable {
    package let store: any PushStore
    package let since: Date
    package let until: Date?
    package let signingKey: AuditSigningKey?
    /// The last seq to export of the chains named here (`audit archive`: the cut), whatever `until` says: records
    /// appended meanwhile stay out of the file.
    package let through: [String: Int64]
    let pageSize: Int
    let now: @Sendable () -> Date

    package init(
        store: any PushStore,
        since: Date,
        until: Date?,
        signingKey: AuditSigningKey?,
        through: [String: Int64] = [:],
        pageSize: Int = 5_000,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.store = store
        self.since = since
        self.until = until
        self.signingKey = signingKey
        self.through = through
        self.pageSize = max(1, pageSize)
        self.now = now
    }

    /// What was exported of one chain.
    package struct Section: Sendable, Equatable {
        package var chain: String
        package var anchor: AuditAnchor
        package var records: Int
        package var firstSeq: Int64
        package var lastSeq: Int64
        /// Checkpoint lines written, the export-time one included.
        package var checkpoints: Int
        /// Whether the section ends on a checkpoint signed at export time, not by the relay.
        package var signedAtExport = false
        /// Whether the section's last record is covered by a checkpoint in the file.
        package var signedEnd: Bool
    }

    /// How far the walk through one chain has come, for a progress display.
    package struct Progress: Sendable, Equatable {
        package var chain: String
        /// Records walked so far in this chain, exported or not.
        package var walked: Int
        /// Records the chain holds (about: from its anchor to its head).
        package var total: Int
    }

    package enum Failure: Error, CustomStringConvertible {
        /// The stored chain does not verify; nothing was signed.
        case notIntact(AuditProblem)

        package var description: String {
            switch self {
            case .notIntact(let problem):
                "the stored audit log does not verify, so it was not exported or signed: \(problem.message) "
                    + "(see pushrelay audit verify)"
            }
        }
    }

    /// Writes the export, line by line, through `write` (each line without its line break).
    ///
    /// - Parameters:
    ///   - chains: The chains to export; `nil` for every chain in the store.
    ///   - write: Receives each line.
    ///   - progress: Called after each page of each chain.
    /// - Returns: One section per chain that had records in the range, in chain order.
    /// - Throws: ``Failure/notIntact(_:)``, the store's errors, and `write`'s.
    package func write(
        chains: [String]? = nil,
        to write: (String) throws -> Void,
        progress: (Progress) -> Void = { _ in }
    ) async throws -> [Section] {
        var sections: [Section] = []
        let targets = try await store.auditChains(among: chains)
        for chain in targets {
            if let section = try await export(chain: chain, write: write, progress: progress) {
                sections.append(section)
            }
        }
        return sections
    }

    private func export(
        chain: String,
        write: (String) throws -> Void,
        progress: (Progress) -> Void
    ) async throws -> Section? {
        let sinceMillis = AuditTime.millis(since)
        let untilMillis = until.map(AuditTime.millis)
        let lastSeq = through[chain]
        let start = try await store.auditAnchor(chain: chain) ?? .genesis(chain: chain)
        let head = try await store.auditHead(chain: chain) ?? start
        let total = Int(clamping: max(0, head.seq - start.seq))
        let keyID = signingKey?.publicKey.keyID
        let stored = try await store.auditCheckpoints(chain: chain)
        var checkpoints = stored.filter { keyID == nil || $0.keyID == keyID }[...]
        var verifier = AuditVerifier(anchor: start, publicKey: signingKey?.publicKey)

        // Checkpoints before the start sign pruned records; those at the start sign the anchor.
        var atPrevious: [AuditCheckpoint] = []
        while let first = checkpoints.first, first.seq <= start.seq {
            checkpoints.removeFirst()
            guard first.seq == start.seq else { continue }
            if let problem = verifier.feed(first) { throw Failure.notIntact(problem) }
            atPrevious.append(first)
        }

        var previous = start
        var section: Section?
        var walked = 0
        var position: Int64 = 0
        paging: while true {
            let page = try await store.auditRecords(chain: chain, after: position, limit: pageSize)
            for stored in page {
                let record = stored.record
                if let untilMillis, record.timeMillis >= untilMillis { break paging }
                if let lastSeq, record.seq > lastSeq { break paging }
                if let problem = verifier.feed(record) { throw Failure.notIntact(problem) }
                var signing: [AuditCheckpoint] = []
                while let next = checkpoints.first, next.seq <= record.seq {
                    checkpoints.removeFirst()
                    guard next.seq == record.seq else { continue }
                    if let problem = verifier.feed(next) { throw Failure.notIntact(problem) }
                    signing.append(next)
                }
                walked += 1
                if section == nil {
                    guard record.timeMillis >= sinceMillis else {
                        previous = AuditAnchor(chain: chain, seq: record.seq, link: record.link)
                        atPrevious = signing
                        continue
                    }
                    let header = AuditExportHeader(
                        chain: chain, anchor: previous, exportedAtMillis: AuditTime.millis(now()), publicKeyID: keyID
                    )
                    try write(AuditExportLine.header(header).encode())
                    for checkpoint in atPrevious { try write(AuditExportLine.checkpoint(checkpoint).encode()) }
                    section = Section(
                        chain: chain, anchor: previous, records: 0, firstSeq: record.seq, lastSeq: record.seq,
                        checkpoints: atPrevious.count, signedEnd: false
                    )
                }
                try write(AuditExportLine.record(record).encode())
                for checkpoint in signing { try write(AuditExportLine.checkpoint(checkpoint).encode()) }
                section?.records += 1
                section?.lastSeq = record.seq
                section?.checkpoints += signing.count
                section?.signedEnd = !signing.isEmpty
            }
            progress(Progress(chain: chain, walked: walked, total: max(total, walked)))
            guard let last = page.last, page.count == pageSize else { break }
            position = last.position
        }
        // A gap found at the last record walked is only reported here.
        let verification = verifier.finish(requireSignedEnd: false)
        if let problem = verification.problem { throw Failure.notIntact(problem) }
        guard var section else { return nil }
        if let signingKey, !section.signedEnd {
            let end = verification.head
            let checkpoint = signingKey.checkpoint(
                chain: chain, seq: end.seq, link: end.link, time: now(), madeAtExport: true)
            try write(AuditExportLine.exportCheckpoint(checkpoint).encode())
            section.checkpoints += 1
            section.signedEnd = true
            section.signedAtExport = true
        }
        return section
    }
}
