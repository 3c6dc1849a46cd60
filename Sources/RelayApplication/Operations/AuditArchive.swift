import Crypto
package import Foundation
package import RelayCore
package import RelayStore

/// Moves each chain's records older than a date to an archive file and removes them from the store
/// (`pushrelay audit archive`), so that the archive and the live chain verify together.
///
/// ### Overview
/// An archive is an export (``AuditExport``, the format `audit verify --export` reads) of each chain's **cut**
/// (``AuditCut``, the same plan `audit prune` follows): the records from where the chain starts up to the newest of
/// the unbroken run older than the date. ``run(before:to:progress:)`` goes in an order that never loses a record:
/// 1. each cut record is signed (a checkpoint stored like the one `audit prune` signs), so every section of the file
///    ends on a checkpoint of the key's and the live chain's new anchor is signed too;
/// 2. the file is written beside its name, flushed to disk and put in place without replacing anything
///    (``LineFileWriter``);
/// 3. the file is read back and verified with the key's public half, and each section must end exactly at its cut
///    (seq and link) and hold every record of it;
/// 4. only then each chain is pruned to its cut.
///
/// The live chain then starts from the cut: its anchor is the archive's last record, and its next record links onto
/// that record's link. ``AuditArchiveCheck`` verifies archives and the store together that way.
///
/// An archive needs a signing key: without one, nothing would sign the end of the file, and records that have left
/// the store could be altered unnoticed. The stored chain is verified as it is written (``AuditExport``), so an
/// altered log is not archived.
package struct AuditArchive: Sendable {
    package let store: any PushStore
    package let signingKey: AuditSigningKey
    /// The chains to archive; `nil` for every chain in the store.
    package let chains: [String]?
    let pageSize: Int
    let now: @Sendable () -> Date

    package init(
        store: any PushStore,
        signingKey: AuditSigningKey,
        chains: [String]? = nil,
        pageSize: Int = 5_000,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.store = store
        self.signingKey = signingKey
        self.chains = chains
        self.pageSize = max(1, pageSize)
        self.now = now
    }

    /// What an archive run did.
    package struct Outcome: Sendable, Equatable {
        /// The cut of each chain archived, in chain order (and in file order).
        package var cuts: [AuditCut]
        /// The SHA-256 of the archive file, hex; `nil` when nothing was old enough and no file was written.
        package var sha256: String?
    }

    package enum Failure: Error, CustomStringConvertible {
        /// The file was written but does not read back as the archive of the cuts; nothing was removed.
        case readBack(path: String, reason: String)
        /// The file is complete and verified, but removing the records of `chain` from the store failed; `done`
        /// holds what was removed before (the cuts of the chains before it, and the file's SHA-256), to be recorded.
        case prune(path: String, chain: String, done: Outcome, error: any Error)

        package var description: String {
            switch self {
            case .readBack(let path, let reason):
                "the archive written to \(path) does not verify when read back (\(reason)); nothing was removed "
                    + "from the store, and \(path) is not a valid archive: remove it before trying again"
            case .prune(let path, let chain, let done, let error):
                "\(path) is complete and verified, but chain \(chain) could not be pruned to its cut: \(error). "
                    + (done.cuts.isEmpty
                        ? "Nothing was removed from the store"
                        : "Chains \(done.cuts.map(\.chain).joined(separator: ", ")) were pruned")
                    + "; what is still stored is also "
                    + "in the archive, and `audit verify --archive \(path)` accepts that overlap"
            }
        }
    }

    /// What archiving every chain's records older than `cutoff` would move, in chain order.
    package func plan(before cutoff: Date) async throws -> [AuditCut] {
        try await AuditCut.plans(store: store, chains: chains, before: cutoff, pageSize: pageSize)
    }

    /// Archives every chain's records older than `cutoff` to a new file at `path`, then removes them from the store.
    ///
    /// Nothing is written when no chain has a record older than `cutoff`.
    /// - Parameter progress: Called after each page of each chain, as the file is written.
    /// - Throws: ``LineFileWriter/Failure`` when `path` exists, ``AuditExport/Failure`` when a stored chain does not
    ///   verify (nothing is written or removed), ``Failure``, and the store's errors.
    package func run(
        before cutoff: Date,
        to path: String,
        progress: (AuditExport.Progress) -> Void = { _ in }
    ) async throws -> Outcome {
        let cuts = try await plan(before: cutoff)
        guard !cuts.isEmpty else { return Outcome(cuts: [], sha256: nil) }
        let writer = try LineFileWriter(path: path, replacing: false)
        let export = AuditExport(
            store: store, since: .distantPast, until: nil, signingKey: signingKey,
            through: Dictionary(uniqueKeysWithValues: cuts.map { ($0.chain, $0.anchor.seq) }),
            pageSize: pageSize, now: now
        )
        do {
            // A first walk verifies every cut before anything is signed: a signature must never vouch for records
            // altered in the store. Its lines (and the signatures it makes in memory) go nowhere.
            _ = try await export.write(chains: cuts.map(\.chain), to: { _ in })
            let signedAt = now()
            try await store.commit(
                StoreBatch(checkpoints: cuts.map { $0.checkpoint(signedBy: signingKey, time: signedAt) }))
            _ = try await export.write(chains: cuts.map(\.chain), to: writer.write, progress: progress)
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }

        let sha256 = try Self.check(fileAt: path, against: cuts, publicKey: signingKey.publicKey)

        var done = Outcome(cuts: [], sha256: sha256)
        for cut in cuts {
            do {
                _ = try await store.pruneAudit(to: cut.anchor)
            } catch {
                throw Failure.prune(path: path, chain: cut.chain, done: done, error: error)
            }
            done.cuts.append(cut)
        }
        return done
    }

    /// Reads the file back: it must verify with `publicKey`, and hold one section per cut, in order, each ending on
    /// its cut record after all of the cut's records.
    /// - Returns: The file's SHA-256, hex.
    static func check(fileAt path: String, against cuts: [AuditCut], publicKey: AuditPublicKey) throws -> String {
        let read = try AuditArchiveFile.read(path: path, publicKey: publicKey)
        if let unreadable = read.result.unreadable {
            throw Failure.readBack(path: path, reason: unreadable.description)
        }
        guard read.result.sections.count == cuts.count else {
            throw Failure.readBack(
                path: path, reason: "\(read.result.sections.count) sections for \(cuts.count) chains")
        }
        for (section, cut) in zip(read.result.sections, cuts) {
            if let problem = section.problem { throw Failure.readBack(path: path, reason: problem.message) }
            guard section.chain == cut.chain, section.lastSeq == cut.anchor.seq, section.lastLink == cut.anchor.link,
                section.firstSeq == cut.firstSeq, section.recordsVerified == cut.records
            else {
                throw Failure.readBack(
                    path: path,
                    reason: "chain \(section.chain)'s section ends at seq \(section.lastSeq), not at the cut "
                        + "(chain \(cut.chain), \(cut.span))")
            }
        }
        return read.sha256
    }

    /// The `retention` entry recording that `cut` was archived to `file` (named as given) and removed from the store.
    package static func entry(for cut: AuditCut, file: String, sha256: String, actor: String, time: Date) -> AuditEntry
    {
        let before = AuditTime.iso8601(millis: cut.cutoffMillis)
        return AuditEntry(
            timeMillis: AuditTime.millis(time),
            event: .retention,
            outcome: "audit.archive",
            actor: actor,
            after: .object([
                "chain": .string(cut.chain),
                "firstSeq": .int(cut.firstSeq),
                "lastSeq": .int(cut.anchor.seq),
                "records": .int(Int64(cut.records)),
                "before": .string(before),
                "file": .string(file),
                "sha256": .string(sha256),
            ]),
            detail: "archived \(cut.span) of chain \(cut.chain) (before \(before)) to \(file), sha256 \(sha256)"
        )
    }
}

/// One archive (or export) file read through: each section's verification, the anchor each section starts from, and
/// the file's SHA-256, which the `audit.archive` record names.
package struct AuditArchiveFile: Sendable {
    package var path: String
    package var result: AuditExportCheck.Result
    /// Each section's header anchor, in file order (one per entry of `result.sections`, up to an unreadable line).
    package var anchors: [AuditAnchor]
    /// The SHA-256 of the file's bytes, hex.
    package var sha256: String

    /// Reads and verifies the file at `path` line by line, with `publicKey`.
    /// - Throws: When the file cannot be opened or read.
    package static func read(path: String, publicKey: AuditPublicKey) throws -> AuditArchiveFile {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw FileLinesError(path: path) }
        var hash = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty { hash.update(data: chunk) }
        try handle.close()
        let sha256 = AuditHex.encode(Array(hash.finalize()))

        let lines = try FileLines(path: path)
        var verifier = AuditExportVerifier(publicKey: publicKey)
        var anchors: [AuditAnchor] = []
        var unreadable: AuditExportError?
        var number = 0
        for line in lines {
            number += 1
            guard line.contains(where: { !$0.isWhitespace }) else { continue }
            do throws(AuditExportError) {
                let decoded = try AuditExportLine.decode(line: line, lineNumber: number)
                if case .header(let header) = decoded { anchors.append(header.anchor) }
                try verifier.feed(decoded, lineNumber: number)
            } catch {
                unreadable = error
                break
            }
        }
        if let failure = lines.failure { throw failure }
        let result = AuditExportCheck.Result(sections: verifier.finish(), unreadable: unreadable)
        return AuditArchiveFile(path: path, result: result, anchors: anchors, sha256: sha256)
    }
}
