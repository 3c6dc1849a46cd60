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
    /// Checkpoints whose signature and link were both checked.
    package var checkpointsVerified: Int
    /// The first problem; verification stopped there.
    package var problem: AuditProblem?

    package init(
        chain: String, recordsVerified: Int, firstSeq: Int64?, lastSeq: Int64, lastLink: [UInt8],
        checkpointsVerified: Int, problem: AuditProblem?
    ) {
        self.chain = chain
        self.recordsVerified = recordsVerified
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.lastLink = lastLink
        self.checkpointsVerified = checkpointsVerified
        self.problem = problem
    }

    package var isIntact: Bool { problem == nil }

    /// Where a later verification of the same chain can continue from (meaningful when intact).
    package var head: AuditAnchor {
        AuditAnchor(chain: chain, seq: lastSeq, link: lastLink)
    }
}
