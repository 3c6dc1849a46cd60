/// A line of an export file that cannot be read, or that is out of place.
package struct AuditExportError: Error, Equatable, CustomStringConvertible {
    /// The 1-based line number.
    package var line: Int
    /// The dotted path of the offending field (`record.seq`), or `nil` when the line as a whole is wrong.
    package var field: String?
    package var reason: String

    package init(line: Int, field: String?, reason: String) {
        self.line = line
        self.field = field
        self.reason = reason
    }

    /// E.g. `audit export line 12: record.seq: expected an integer, got a string`.
    package var description: String {
        if let field {
            "audit export line \(line): \(field): \(reason)"
        } else {
            "audit export line \(line): \(reason)"
        }
    }
}
