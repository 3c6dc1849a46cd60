internal import Foundation

/// A value from the file or the environment, already of its key's ``ConfigurationKey/Kind``.
enum ConfigurationValue: Equatable, Sendable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    case stringList([String])

    /// What an environment variable's text means for a key.
    enum EnvironmentReading: Equatable, Sendable {
        case value(ConfigurationValue)
        /// Empty (or blank): the key takes its default, as if it were absent from the file too.
        case unset
        /// The text is not of the key's type; the message never quotes the text, which may be a secret.
        case invalid(String)
    }

    /// Reads an environment variable's text as a value of `kind`.
    ///
    /// Integers and numbers are decimal; booleans are `true`, `false`, `1` or `0` (any case); lists are
    /// comma-separated, each item trimmed and empty items dropped. Surrounding whitespace is ignored, and a blank
    /// value means "unset", so an override can also switch a key from the file off.
    static func reading(environment text: String, as kind: ConfigurationKey.Kind) -> EnvironmentReading {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return .unset }
        switch kind {
        case .string:
            return .value(.string(trimmed))
        case .integer:
            guard let integer = Int(trimmed) else { return .invalid("expected an integer") }
            return .value(.integer(integer))
        case .number:
            guard let number = Double(trimmed), number.isFinite else { return .invalid("expected a number") }
            return .value(.number(number))
        case .boolean:
            switch trimmed.lowercased() {
            case "true", "1": return .value(.boolean(true))
            case "false", "0": return .value(.boolean(false))
            default: return .invalid("expected true, false, 1 or 0")
            }
        case .stringList:
            let items = trimmed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return .value(.stringList(items.filter { !$0.isEmpty }))
        }
    }
}

extension ConfigurationKey.Kind {
    /// `"an integer"`, for "expected …" messages.
    var expectation: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .boolean: "true or false"
        case .stringList: "an array of strings"
        }
    }
}
