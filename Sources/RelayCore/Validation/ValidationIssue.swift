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

/// A request that failed validation, with every problem found.
package struct ValidationFailure: Error, Sendable, Equatable {
    package var issues: [ValidationIssue]

    package init(issues: [ValidationIssue]) {
        self.issues = issues
    }

    /// A body that is not JSON: one issue without a path, saying why and where.
    package init(notJSON error: JSONSyntaxError) {
        self.init(issues: [ValidationIssue(path: "", message: "the request body is not valid JSON: \(error)")])
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
