package import Foundation

/// Reads the times given to `--since` and `--until`: a UTC day (`2027-01-15`, meaning its midnight) or an ISO 8601
/// time with a zone (`2027-01-15T08:00:00Z`, `2027-01-15T10:00:00.250+02:00`).
package enum AuditTimeArgument {
    /// The time `text` names, or `nil` when it is neither form.
    package static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.count == 10 {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate]
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.date(from: trimmed)
        }
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
        ] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: trimmed) { return date }
        }
        return nil
    }

    /// What the forms look like, for error messages.
    package static let expected = "a UTC day (2027-01-15) or an ISO 8601 time with a zone (2027-01-15T08:00:00Z)"
}
