package import RelayCore

/// How `pushrelay audit verify` describes a verified chain or export section: one line each.
package enum AuditVerificationReport {
    /// `chain relay-1: intact, records 1…500 (500 records), 8 signed checkpoints verified`, or
    /// `chain relay-1: NOT INTACT at seq 42: record seq 42 of chain relay-1 does not match its link (modified): …`.
    package static func line(for verification: AuditVerification) -> String {
        let chain = verification.chain
        if let problem = verification.problem {
            return "chain \(chain): NOT INTACT at seq \(problem.seq): \(problem.message)"
        }
        guard let first = verification.firstSeq else {
            return "chain \(chain): intact, no records (it starts after seq \(verification.lastSeq))"
        }
        let records = verification.recordsVerified
        let span = first == verification.lastSeq ? "record \(first)" : "records \(first)…\(verification.lastSeq)"
        let checkpoints =
            verification.checkpointsVerified == 1
            ? "1 signed checkpoint verified" : "\(verification.checkpointsVerified) signed checkpoints verified"
        return "chain \(chain): intact, \(span) (\(records) record\(records == 1 ? "" : "s")), \(checkpoints)"
    }
}
