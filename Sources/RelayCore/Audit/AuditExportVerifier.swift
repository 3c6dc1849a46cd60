/// Verifies an export file line by line, one ``AuditVerifier`` per chain section.
///
/// Each section is verified from its header's anchor with the auditor's public key and `requireSignedEnd`, so a
/// section is intact only if its records chain correctly and its last record is covered by a valid checkpoint: an
/// export cannot have been edited, reordered or cut short after its last checkpoint. Memory stays bounded: only the
/// current section's verifier and one ``AuditVerification`` per finished section are kept.
///
/// Lines that cannot be read, and records or checkpoints before any header, throw ``AuditExportError``; problems of
/// the chain itself are results (``AuditVerification/problem``), not errors.
package struct AuditExportVerifier: Sendable {
    let publicKey: AuditPublicKey
    /// Lines fed so far, blank ones included, so errors carry the file's line numbers.
    private(set) var lineNumber = 0
    private var current: AuditVerifier?
    /// The sections finished so far.
    package private(set) var completed: [AuditVerification] = []

    package init(publicKey: AuditPublicKey) {
        self.publicKey = publicKey
    }

    /// Reads and checks the next line of the file; blank lines are skipped.
    /// - Throws: ``AuditExportError`` for a line that cannot be read or is out of place.
    package mutating func feed(line: String) throws(AuditExportError) {
        lineNumber += 1
        guard line.contains(where: { !$0.isWhitespace }) else { return }
        try feed(AuditExportLine.decode(line: line, lineNumber: lineNumber), lineNumber: lineNumber)
    }

    /// Checks a line that is already decoded.
    package mutating func feed(_ line: AuditExportLine, lineNumber: Int) throws(AuditExportError) {
        switch line {
        case .header(let header):
            closeSection()
            current = AuditVerifier(anchor: header.anchor, publicKey: publicKey)
        case .record(let record):
            guard current != nil else {
                throw AuditExportError(line: lineNumber, field: nil, reason: "a record before any header")
            }
            _ = current?.feed(record)
        case .checkpoint(let checkpoint), .exportCheckpoint(let checkpoint):
            guard current != nil else {
                throw AuditExportError(line: lineNumber, field: nil, reason: "a checkpoint before any header")
            }
            _ = current?.feed(checkpoint)
        }
    }

    /// The verification of every section, in file order. A file without a header yields none, which a caller
    /// should treat as "nothing verified", not as success.
    package mutating func finish() -> [AuditVerification] {
        closeSection()
        return completed
    }

    private mutating func closeSection() {
        if let current {
            completed.append(current.finish(requireSignedEnd: true))
        }
        current = nil
    }
}
