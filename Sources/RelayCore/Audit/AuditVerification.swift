/// The result of verifying one stretch of one chain.
package struct AuditVerification: Sendable, Equatable {
    package var chain: String
    /// Records that passed, up to the problem if there is one.
    package var recordsVerified: Int
    /// The first record's seq; `nil` when no record passed.
    package var firstSeq: Int64?
    /// The last record that passed (the anchor's seq when none did).
    package var lastSeq: Int64
    /// Its link (the anchor's link when no record passed).
    package var lastLink: [UInt8]
    /// The relay's own checkpoints whose signature and link were both checked.
    package var checkpointsVerified: Int
    /// Checkpoints signed by `audit export` when it wrote the file (``AuditCheckpoint/madeAtExport``), checked like
    /// the relay's but counted apart: they say the file is as exported, not that the relay signed the records when it
    /// wrote them.
    package var exportCheckpointsVerified: Int
    /// The last seq a verified checkpoint (either kind) covers; `nil` when none was verified.
    package var lastSignedSeq: Int64?
    /// The first problem; verification stopped there.
    package var problem: AuditProblem?

    package init(
        chain: String, recordsVerified: Int, firstSeq: Int64?, lastSeq: Int64, lastLink: [UInt8],
        checkpointsVerified: Int, problem: AuditProblem?, exportCheckpointsVerified: Int = 0,
        lastSignedSeq: Int64? = nil
    ) {
        self.chain = chain
        self.recordsVerified = recordsVerified
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.lastLink = lastLink
        self.checkpointsVerified = checkpointsVerified
        self.exportCheckpointsVerified = exportCheckpointsVerified
        self.lastSignedSeq = lastSignedSeq
        self.problem = problem
    }

    /// Verified records after the last verified checkpoint: records nobody has signed yet. On a running relay these
    /// are the records of the last `checkpoint_interval_seconds`; many more, or a chain never signed, deserve a look.
    package var unsignedRecords: Int {
        guard let firstSeq else { return 0 }
        guard let lastSignedSeq else { return recordsVerified }
        return Int(clamping: max(0, lastSeq - max(lastSignedSeq, firstSeq - 1)))
    }

    package var isIntact: Bool { problem == nil }

    /// Where a later verification of the same chain can continue from (meaningful when intact).
    package var head: AuditAnchor {
        AuditAnchor(chain: chain, seq: lastSeq, link: lastLink)
    }
}
