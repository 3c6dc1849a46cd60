extension AuditVerifier {
    /// Checks a checkpoint, fed right after the record with its seq.
    ///
    /// A checkpoint is checked against the link the verifier computed, and the verifier keeps only the last one,
    /// so a checkpoint must be for the last record fed (or for the anchor, before any record). In order:
    /// - another chain's checkpoint: `.badCheckpoint`;
    /// - a seq before the anchor: skipped, since those records were pruned and the checkpoint can neither confirm
    ///   nor contradict anything fed here (a store may keep old checkpoints after pruning);
    /// - with a public key, another key's checkpoint or a bad signature: `.badCheckpoint`;
    /// - a seq after the last record: with a valid signature, proof that those records existed, so `.deleted`
    ///   naming the first missing one; without a key, `.badCheckpoint`;
    /// - a seq before the last record: out of place, `.badCheckpoint`;
    /// - the last record's seq with a different link: `.badCheckpoint` (the records up to it were rewritten).
    ///
    /// Only with a public key does a checkpoint count as verified and cover the records up to it.
    /// - Returns: the problem, once; `nil` if the checkpoint is fine or verification already stopped.
    package mutating func feed(_ checkpoint: AuditCheckpoint) -> AuditProblem? {
        position += 1
        guard case .verifying = state else { return nil }
        let seq = checkpoint.seq
        func bad(_ why: String) -> AuditProblem {
            stop(.badCheckpoint(chain: chain, seq: seq, position: position, why))
        }
        guard checkpoint.chain == chain else { return bad("it belongs to chain \(checkpoint.chain)") }
        if seq < anchor.seq { return nil }
        if let publicKey {
            guard checkpoint.keyID == publicKey.keyID else {
                return bad("signed by unknown key \(checkpoint.keyID) (expected \(publicKey.keyID))")
            }
            guard publicKey.isValidSignature(checkpoint) else { return bad("the signature does not verify") }
        }
        if seq > lastSeq {
            guard publicKey != nil else { return bad("it is for a seq after the last record, \(lastSeq)") }
            return stop(
                .missing(
                    chain: chain, from: lastSeq + 1, to: seq, position: position,
                    because: "a signed checkpoint covers seq \(seq) but the records end at seq \(lastSeq)"))
        }
        if seq < lastSeq {
            return bad("it comes after record \(lastSeq); a checkpoint must follow the record it signs")
        }
        guard checkpoint.link == lastLink else {
            return bad("its link differs from the records' (records up to seq \(seq) were rewritten)")
        }
        if publicKey != nil { markSigned(atExport: checkpoint.madeAtExport) }
        return nil
    }
}
