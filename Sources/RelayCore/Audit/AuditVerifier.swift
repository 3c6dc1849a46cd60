/// Checks a stretch of one chain, record by record, in constant memory.
///
/// ### Overview
/// Feed the records in stored order, each signed ``AuditCheckpoint`` right after the record with its seq, then call
/// ``finish(requireSignedEnd:)``. The verifier keeps only the last record's seq and link (plus counters), so it
/// verifies millions of records without holding them. The first problem wins: `feed` returns it once, verification
/// stops there, and later items are ignored (they return `nil`); ``finish(requireSignedEnd:)`` reports it.
///
/// ### What is named
/// A link is `SHA-256(previous link ‖ canonical bytes)`, so a record cannot be checked "on its own": all the
/// verifier can see is the first record whose stored link disagrees with the running chain.
/// - **Content changed, link left alone** (or only the link changed): that record is named, `.modified`.
/// - **Content changed and its link recomputed** by whoever edited it: that record still chains onto its
///   predecessor, and its new link no longer matches what its successor was chained onto, so the **next** record is
///   named, `.modified`. The two cases look exactly the same to the verifier at that next record (a stored link
///   that is not the hash of the running link and the content), so the message says the fault is in that record or
///   its predecessor.
/// - **Every link from the edited record onwards recomputed**: the chain is consistent again; only a checkpoint can
///   tell. The first checkpoint after the edit disagrees, `.badCheckpoint` naming its seq, and the edit lies after
///   the previous valid checkpoint. Without a later checkpoint the edit is caught only by
///   `requireSignedEnd`, as `.unsigned` naming the first record after the last valid checkpoint.
/// - **A gap in seq** (`seq > lastSeq + 1`) is held for one more record before it is named: if the next record
///   fills the gap, two records were swapped and that record is named `.reordered` ("seq 10 appears after seq 11");
///   otherwise (a further record, or the end) the gap is `.deleted`, naming the first missing seq and, in the
///   message, the record after the gap. A record moved more than one place later is therefore reported as the gap
///   it leaves.
/// - **A seq at or below the last one** is `.reordered`, naming that record; a record of another chain is
///   `.foreignRecord`. The chain is checked first, since a foreign record's seq means nothing here.
/// - Deleting the **last** records leaves no gap; it is caught when a signed checkpoint names a later seq than the
///   last record (`.deleted`), or by `requireSignedEnd`.
package struct AuditVerifier: Sendable {
    /// Where the stretch starts: the record before it (seq 0 and the genesis link for a whole chain).
    package let anchor: AuditAnchor
    let publicKey: AuditPublicKey?

    var lastSeq: Int64
    var lastLink: [UInt8]
    /// Items fed so far, records and checkpoints.
    var position = 0
    var recordsVerified = 0
    var firstSeq: Int64?
    var checkpointsVerified = 0
    /// Checkpoints signed at export time whose signature and link were both checked.
    var exportCheckpointsVerified = 0
    /// The seq the last valid checkpoint covers, the relay's own or an export's.
    var lastSignedSeq: Int64?
    /// The first verified record not yet covered by a valid checkpoint, if any.
    var firstUnsigned: (seq: Int64, position: Int)?
    var state: State = .verifying

    enum State: Sendable {
        /// Every record so far chains correctly.
        case verifying
        /// Record `seq`, at `position`, skipped ahead of `lastSeq + 1`: a deletion, or the first of two swapped
        /// records; the next record decides which.
        case gap(seq: Int64, position: Int)
        /// A problem was found; nothing more is checked.
        case stopped(AuditProblem)
    }

    /// A verifier for the stretch after `anchor`.
    /// - Parameters:
    ///   - anchor: the record before the first one to be fed.
    ///   - publicKey: the key checkpoints must be signed with; without one, checkpoints are only compared with the
    ///     records (and never count as verified), and `requireSignedEnd` cannot be met.
    package init(anchor: AuditAnchor, publicKey: AuditPublicKey? = nil) {
        self.anchor = anchor
        self.publicKey = publicKey
        self.lastSeq = anchor.seq
        self.lastLink = anchor.link
    }

    /// A verifier for a whole chain, from seq 1.
    package init(chain: String, publicKey: AuditPublicKey? = nil) {
        self.init(anchor: .genesis(chain: chain), publicKey: publicKey)
    }

    package var chain: String { anchor.chain }

    /// Checks the next record in stored order.
    /// - Returns: the problem it reveals, once; `nil` if it is fine, or verification already stopped, or the record
    ///   follows a gap whose kind the next record decides.
    package mutating func feed(_ record: AuditRecord) -> AuditProblem? {
        position += 1
        switch state {
        case .stopped:
            return nil
        case .gap(let gapSeq, let gapPosition):
            if record.chain == chain, record.seq > lastSeq, record.seq < gapSeq {
                return stop(.reordered(chain: chain, seq: record.seq, after: gapSeq, position: position))
            }
            return stop(gapProblem(seq: gapSeq, position: gapPosition))
        case .verifying:
            break
        }
        guard record.chain == chain else {
            return stop(
                AuditProblem(
                    kind: .foreignRecord, seq: record.seq, position: position,
                    message: "record seq \(record.seq) of chain \(record.chain) appears in chain \(chain)"))
        }
        if record.seq > lastSeq + 1 {
            state = .gap(seq: record.seq, position: position)
            return nil
        }
        if record.seq <= lastSeq {
            if recordsVerified == 0 {
                return stop(
                    AuditProblem(
                        kind: .reordered, seq: record.seq, position: position,
                        message: "record seq \(record.seq) of chain \(chain) comes before the verified stretch, "
                            + "which starts after seq \(anchor.seq)"))
            }
            return stop(.reordered(chain: chain, seq: record.seq, after: lastSeq, position: position))
        }
        let link = AuditChain.link(after: lastLink, canonicalBytes: record.canonicalBytes())
        guard link == record.link else {
            let suspects =
                record.seq > anchor.seq + 1
                ? "either it was modified, or seq \(record.seq - 1) was modified and its link recomputed"
                : "it was modified"
            return stop(
                AuditProblem(
                    kind: .modified, seq: record.seq, position: position,
                    message: "record seq \(record.seq) of chain \(chain) does not match its link (modified): "
                        + suspects))
        }
        lastSeq = record.seq
        lastLink = link
        recordsVerified += 1
        if firstSeq == nil { firstSeq = record.seq }
        if firstUnsigned == nil { firstUnsigned = (record.seq, position) }
        return nil
    }

    /// The result so far, as if the stream ended here.
    /// - Parameter requireSignedEnd: whether the last record must be covered by a valid checkpoint (export
    ///   verification); if it is not, the problem is `.unsigned`, naming the first record after the last valid
    ///   checkpoint. An empty stretch has nothing to sign.
    package func finish(requireSignedEnd: Bool) -> AuditVerification {
        var problem: AuditProblem?
        switch state {
        case .stopped(let found):
            problem = found
        case .gap(let seq, let position):
            problem = gapProblem(seq: seq, position: position)
        case .verifying:
            if requireSignedEnd, let first = firstUnsigned {
                let noKey = publicKey == nil ? " (no public key to check checkpoints with)" : ""
                let verb = first.seq == lastSeq ? "is" : "are"
                problem = AuditProblem(
                    kind: .unsigned, seq: first.seq, position: first.position,
                    message: "\(AuditProblem.span(first.seq, lastSeq)) of chain \(chain) \(verb) not covered by a "
                        + "signed checkpoint\(noKey)")
            }
        }
        return AuditVerification(
            chain: chain, recordsVerified: recordsVerified, firstSeq: firstSeq, lastSeq: lastSeq,
            lastLink: lastLink, checkpointsVerified: checkpointsVerified, problem: problem,
            exportCheckpointsVerified: exportCheckpointsVerified, lastSignedSeq: lastSignedSeq)
    }

    mutating func stop(_ problem: AuditProblem) -> AuditProblem {
        state = .stopped(problem)
        return problem
    }

    /// A gap that turned out not to be a swap: the records between the last good one and `seq` are missing.
    private func gapProblem(seq: Int64, position: Int) -> AuditProblem {
        .missing(
            chain: chain, from: lastSeq + 1, to: seq - 1, position: position,
            because: "seq \(seq) follows seq \(lastSeq)")
    }

    /// Records that a valid checkpoint covers everything verified so far.
    mutating func markSigned(atExport: Bool) {
        if atExport { exportCheckpointsVerified += 1 } else { checkpointsVerified += 1 }
        lastSignedSeq = lastSeq
        firstUnsigned = nil
    }
}
