package import RelayCore

/// How `pushrelay audit verify` describes a verified chain or export section: one line each, and a warning where the
/// signatures leave records uncovered.
package enum AuditVerificationReport {
    /// `chain relay-1: intact, records 1…500 (500 records), 8 signed checkpoints verified, signed up to seq 498,
    /// 2 records unsigned after it`, or
    /// `chain relay-1: NOT INTACT at seq 42: record seq 42 of chain relay-1 does not match its link (modified): …`.
    ///
    /// An export's signatures made at export time are counted apart: `…, 0 signed checkpoints verified, 1 signature
    /// made at export time (not by the relay)`.
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
        var parts = [
            "\(span) (\(count(records, "record")))",
            "\(count(verification.checkpointsVerified, "signed checkpoint")) verified",
        ]
        if verification.exportCheckpointsVerified > 0 {
            parts.append(
                "\(count(verification.exportCheckpointsVerified, "signature")) made at export time (not by the relay)")
        }
        if let signed = verification.lastSignedSeq {
            parts.append("signed up to seq \(signed)")
        }
        parts.append("\(count(verification.unsignedRecords, "record")) unsigned after the last checkpoint")
        return "chain \(chain): intact, " + parts.joined(separator: ", ")
    }

    /// A warning for an intact chain that no checkpoint of the relay's own signs, or `nil`. Such a chain is only
    /// consistent with itself: whoever can edit the store could rewrite it and every link after.
    ///
    /// - Parameter keyKnown: whether signatures were checked; without a public key nothing counts as signed, and the
    ///   warning says why.
    package static func warning(for verification: AuditVerification, keyKnown: Bool) -> String? {
        guard verification.isIntact, verification.firstSeq != nil, verification.checkpointsVerified == 0 else {
            return nil
        }
        let chain = verification.chain
        guard keyKnown else {
            return "warning: chain \(chain): no public key, so no checkpoint signature was checked; "
                + "the chain is consistent, but a rewritten store would be too"
        }
        // Also the state of a new chain until the relay's first checkpoint: say when that comes, not only what is
        // missing when no key is set.
        return "warning: chain \(chain) has no checkpoint signed by the relay yet: a relay with [audit] "
            + "signing_key_file signs its chain within checkpoint_interval_seconds of its last record, and when it "
            + "stops; without one, whoever can edit the store can rewrite the chain undetected"
    }

    private static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
