/// One problem with a request: where it is, and what is wrong, in plain words.
///
/// Messages never repeat a device token or other content back: a token is named by its position only.
package struct ValidationIssue: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// A JSON path such as `messages[3].sound.volume`; empty for the request body itself.
    package var path: String
    package var message: String

    package init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    package init(_ path: JSONPath, _ message: String) {
        self.init(path: path.description, message: message)
    }

    package var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// A request that failed validation: the first ``maximumIssues`` problems found, and how many more there were.
///
/// Bounded so that the answer to a hostile body stays small: 90,000 bad messages in a 1 MB body once made a 25 MB
/// answer (issue 20). Each path and message is cut to ``maximumTextLength`` UTF-8 bytes too, since both can quote a
/// key of the request, and a key can be as long as the body.
package struct ValidationFailure: Error, Sendable, Equatable {
    /// The most problems one failure lists.
    package static let maximumIssues = 100
    /// The longest path or message of a listed problem, in UTF-8 bytes; longer ones end in `…`.
    package static let maximumTextLength = 256

    package private(set) var issues: [ValidationIssue]
    /// Problems found beyond the ones listed.
    package private(set) var omitted: Int

    /// A failure listing the first ``maximumIssues`` of `issues`, and counting `omitted` more beyond `issues`.
    package init(issues: [ValidationIssue], omitted: Int = 0) {
        let listed = issues.prefix(Self.maximumIssues)
        self.issues = listed.map {
            ValidationIssue(path: Self.bounded($0.path), message: Self.bounded($0.message))
        }
        self.omitted = omitted + issues.count - listed.count
    }

    /// A body that is not JSON: one issue saying why and where; a key that appears twice is named by its path.
    package init(notJSON error: JSONSyntaxError) {
        if let path = error.duplicateKeyPath {
            self.init(issues: [
                ValidationIssue(
                    path, "appears more than once in its object; send each key once (byte \(error.offset))")
            ])
        } else {
            self.init(issues: [ValidationIssue(path: "", message: "the request body is not valid JSON: \(error)")])
        }
    }

    /// Keeps `issues` to ``maximumIssues`` while a request is being validated, counting what it drops in `omitted`,
    /// so that a body of many bad messages never holds more than a few hundred problems at once.
    package static func trim(_ issues: inout [ValidationIssue], omitted: inout Int) {
        guard issues.count > maximumIssues else { return }
        omitted += issues.count - maximumIssues
        issues.removeSubrange(maximumIssues...)
    }

    private static func bounded(_ text: String) -> String {
        guard text.utf8.count > maximumTextLength else { return text }
        // Whole characters up to the limit, leaving room for the ellipsis (3 bytes of UTF-8).
        var kept = ""
        var length = 0
        for character in text {
            length += character.utf8.count
            guard length <= maximumTextLength - 3 else { break }
            kept.append(character)
        }
        return kept + "…"
    }
}

/// A path into a JSON document, printed as `messages[3].sound.volume`.
package struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    package private(set) var description: String

    package static let root = JSONPath(description: "")

    private init(description: String) {
        self.description = description
    }

    package init(_ key: String) {
        self = JSONPath.root.appending(key)
    }

    /// The path of a member. Keys that are not plain identifiers are quoted: `data["google.x"]`.
    package func appending(_ key: String) -> JSONPath {
        if Self.isIdentifier(key) {
            return JSONPath(description: description.isEmpty ? key : "\(description).\(key)")
        }
        let quoted = JSONValue.string(key).encodedString()
        return JSONPath(description: "\(description)[\(quoted)]")
    }

    /// The path of an array element.
    package func appending(_ index: Int) -> JSONPath {
        JSONPath(description: "\(description)[\(index)]")
    }

    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return key.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
    }
}
