/// The first thing wrong with a chain, as found by ``AuditVerifier``.
package struct AuditProblem: Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable, CaseIterable {
        /// A record's content or link does not match the chain.
        case modified
        /// Records are missing: a gap in `seq`, or a signed checkpoint beyond the last record.
        case deleted
        /// A record appears after one with a higher (or the same) `seq`.
        case reordered
        /// A record of another chain is mixed into this one.
        case foreignRecord
        /// A checkpoint that does not verify: bad signature, unknown key, another chain, a link that disagrees with
        /// the records, or out of place.
        case badCheckpoint
        /// The end of the stretch is not covered by a valid checkpoint although one was required.
        case unsigned
    }

    package var kind: Kind
    /// The seq the problem names: the modified or misplaced record, the first missing or unsigned one, or the
    /// checkpoint's seq.
    package var seq: Int64
    /// The 1-based position, among everything fed to the verifier (records and checkpoints), of the item where the
    /// problem showed.
    package var position: Int
    /// A sentence naming the chain and the seq.
    package var message: String

    package init(kind: Kind, seq: Int64, position: Int, message: String) {
        self.kind = kind
        self.seq = seq
        self.position = position
        self.message = message
    }

    package var description: String { message }
}

extension AuditProblem {
    /// `first…last` for a range of seqs, or the one seq.
    static func span(_ first: Int64, _ last: Int64) -> String {
        first == last ? "record \(first)" : "records \(first)…\(last)"
    }

    static func missing(chain: String, from first: Int64, to last: Int64, position: Int, because why: String)
        -> AuditProblem
    {
        let verb = first == last ? "is" : "are"
        return AuditProblem(
            kind: .deleted, seq: first, position: position,
            message: "\(span(first, last)) of chain \(chain) \(verb) missing (\(why))")
    }

    static func reordered(chain: String, seq: Int64, after previous: Int64, position: Int) -> AuditProblem {
        let message =
            seq == previous
            ? "record seq \(seq) of chain \(chain) appears twice"
            : "record seq \(seq) appears after seq \(previous) in chain \(chain)"
        return AuditProblem(kind: .reordered, seq: seq, position: position, message: message)
    }

    static func badCheckpoint(chain: String, seq: Int64, position: Int, _ why: String) -> AuditProblem {
        AuditProblem(
            kind: .badCheckpoint, seq: seq, position: position,
            message: "checkpoint for seq \(seq) of chain \(chain): \(why)")
    }
}
