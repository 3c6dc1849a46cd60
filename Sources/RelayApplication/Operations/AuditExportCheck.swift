import Foundation
package import RelayCore

/// Verifies an audit export file with nothing but the auditor's public key: no store, no configuration.
///
/// The file is read line by line (``FileLines``), so its size does not matter. See
/// ``RelayCore/AuditExportVerifier`` for what is checked: every section must chain from its header's anchor and end
/// on a checkpoint signed by the key.
package enum AuditExportCheck {
    /// The outcome of checking one file.
    package struct Result: Sendable, Equatable {
        /// Each section's verification, in file order, up to an unreadable line.
        package var sections: [AuditVerification]
        /// A line that could not be read, or was out of place; checking stopped there.
        package var unreadable: AuditExportError?

        /// Intact: every line read, at least one section, and no section with a problem.
        package var isIntact: Bool {
            unreadable == nil && !sections.isEmpty && sections.allSatisfy(\.isIntact)
        }
    }

    /// Checks the lines of an export.
    package static func verify(lines: some Sequence<String>, publicKey: AuditPublicKey) -> Result {
        var verifier = AuditExportVerifier(publicKey: publicKey)
        for line in lines {
            do throws(AuditExportError) {
                try verifier.feed(line: line)
            } catch {
                return Result(sections: verifier.finish(), unreadable: error)
            }
        }
        return Result(sections: verifier.finish(), unreadable: nil)
    }

    /// Checks the export file at `path`.
    /// - Throws: When the file cannot be opened or read.
    package static func verify(fileAt path: String, publicKey: AuditPublicKey) throws -> Result {
        let lines = try FileLines(path: path)
        let result = verify(lines: lines, publicKey: publicKey)
        if let failure = lines.failure { throw failure }
        return result
    }

    /// One line per section and problem, for people: what verified, and the first thing that did not.
    package static func report(_ result: Result) -> [String] {
        var lines = result.sections.map(AuditVerificationReport.line(for:))
        if let unreadable = result.unreadable {
            lines.append("NOT INTACT: \(unreadable.description)")
        } else if result.sections.isEmpty {
            lines.append("NOT VERIFIED: the file holds no section (no header line)")
        }
        return lines
    }
}

/// The lines of a text file, read in chunks so that memory does not grow with the file. A final line without a line
/// break counts; a CR before the LF is dropped.
///
/// Reading errors end the sequence and are kept in ``failure``.
package final class FileLines: Sequence {
    private let handle: FileHandle
    private let chunkSize: Int
    /// The error that ended reading early, if any.
    package private(set) var failure: (any Error)?

    package init(path: String, chunkSize: Int = 1 << 16) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FileLinesError(path: path)
        }
        self.handle = handle
        self.chunkSize = Swift.max(1, chunkSize)
    }

    deinit {
        try? handle.close()
    }

    package struct Iterator: IteratorProtocol {
        let lines: FileLines
        var buffer: [UInt8] = []
        var start = 0
        var finished = false

        package mutating func next() -> String? {
            while true {
                if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    var end = newline
                    if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                    let line = String(decoding: buffer[start..<end], as: UTF8.self)
                    start = newline + 1
                    return line
                }
                if finished {
                    guard start < buffer.count else { return nil }
                    let line = String(decoding: buffer[start...], as: UTF8.self)
                    start = buffer.count
                    return line
                }
                buffer.removeFirst(start)
                start = 0
                do {
                    if let chunk = try lines.handle.read(upToCount: lines.chunkSize), !chunk.isEmpty {
                        buffer.append(contentsOf: chunk)
                    } else {
                        finished = true
                    }
                } catch {
                    lines.failure = error
                    finished = true
                }
            }
        }
    }

    package func makeIterator() -> Iterator {
        Iterator(lines: self)
    }
}

/// A file that cannot be opened for reading.
package struct FileLinesError: Error, CustomStringConvertible {
    package var path: String

    package var description: String { "cannot open \(path) for reading" }
}
