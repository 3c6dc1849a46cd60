internal import Foundation

/// Typed access to a ``ConfigurationSource``'s settings that records a problem for every value it cannot use.
///
/// Each accessor takes the key (`ConfigurationKey.upstreamMaxAttempts`) and returns the value, or the default when the
/// key is absent or its value was rejected. Problems are filed under the name the value came from (the key or its
/// `PUSHRELAY_*` variable). The sections are built in `ConfigurationReader+Sections.swift`.
struct ConfigurationReader {
    private let source: ConfigurationSource
    /// The folder relative paths resolve against.
    let directory: String
    private(set) var problems: [ConfigurationError.Problem] = []

    init(source: ConfigurationSource, directory: String) {
        self.source = source
        self.directory = directory
    }

    /// The apps of `[apps.<name>]` tables and `PUSHRELAY_APPS_*` variables, with the sections each has.
    var appTables: [String: Set<String>] { source.apps }

    /// The name a value came from: its variable when the environment set it, otherwise the key path.
    func origin(_ key: ConfigurationKey) -> String {
        source.settings[key.path]?.origin ?? key.path
    }

    /// Whether the key was given a value, even one that was rejected (and has been reported already).
    func isMentioned(_ key: ConfigurationKey) -> Bool {
        source.settings[key.path] != nil || source.rejected.contains(key.path)
    }

    mutating func report(_ key: ConfigurationKey, _ message: String) {
        problems.append(ConfigurationError.Problem(key: origin(key), message: message))
    }

    // MARK: - Values

    func string(_ key: ConfigurationKey) -> String? {
        guard case .string(let string) = source.settings[key.path]?.value else { return nil }
        return string
    }

    func strings(_ key: ConfigurationKey) -> [String]? {
        guard case .stringList(let strings) = source.settings[key.path]?.value else { return nil }
        return strings
    }

    func boolean(_ key: ConfigurationKey) -> Bool? {
        guard case .boolean(let boolean) = source.settings[key.path]?.value else { return nil }
        return boolean
    }

    func number(_ key: ConfigurationKey) -> Double? {
        guard case .number(let number) = source.settings[key.path]?.value else { return nil }
        return number
    }

    /// The integer at `path` if it lies in `minimum...maximum`; otherwise `nil`, reporting a value out of range.
    mutating func integer(_ key: ConfigurationKey, minimum: Int, maximum: Int = .max) -> Int? {
        guard case .integer(let integer) = source.settings[key.path]?.value else { return nil }
        guard integer >= minimum, integer <= maximum else {
            let range = maximum == .max ? "at least \(minimum)" : "between \(minimum) and \(maximum)"
            report(key, "must be \(range), found \(integer)")
            return nil
        }
        return integer
    }

    /// One of `Value`'s cases by raw value (case ignored), or `defaultValue`.
    mutating func choice<Value: RawRepresentable & CaseIterable>(
        _ key: ConfigurationKey,
        default defaultValue: Value
    ) -> Value where Value.RawValue == String {
        choice(key) ?? defaultValue
    }

    /// One of `Value`'s cases by raw value (case ignored); `nil` when the key is unset or its value is none of them
    /// (reported), for keys whose absence means something of its own.
    mutating func choice<Value: RawRepresentable & CaseIterable>(_ key: ConfigurationKey) -> Value?
    where Value.RawValue == String {
        guard let text = string(key) else { return nil }
        if let value = Value(rawValue: text) ?? Value(rawValue: text.lowercased()) { return value }
        let allowed = Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        report(key, "expected one of \(allowed), found \"\(text)\"")
        return nil
    }

    /// An upstream endpoint: an `https` URL without a trailing slash, or `defaultValue`.
    mutating func endpoint(_ key: ConfigurationKey, default defaultValue: String) -> String {
        guard let text = string(key) else { return defaultValue }
        do throws(ConfigurationSyntaxError) {
            return try ConfigurationSyntax.endpoint(text)
        } catch {
            report(key, error.message)
            return defaultValue
        }
    }

    // MARK: - Files

    /// The file named at `path`, resolved against ``directory``, and its contents; `nil` when the key is unset or
    /// the file cannot be read (reported). Messages name the file, never its contents.
    mutating func file(_ key: ConfigurationKey) -> (path: String, contents: Data)? {
        guard let value = string(key) else { return nil }
        let resolved = ConfigurationPath.resolve(value, against: directory)
        let hint = value.hasPrefix("/") ? "" : " (relative paths resolve against \(directory))"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) else {
            report(key, "file \(resolved) does not exist\(hint)")
            return nil
        }
        guard !isDirectory.boolValue else {
            report(key, "\(resolved) is a folder, not a file")
            return nil
        }
        guard let contents = FileManager.default.contents(atPath: resolved) else {
            report(key, "file \(resolved) cannot be read (check its permissions)")
            return nil
        }
        return (resolved, contents)
    }

    /// A secret file's text, trimmed; `nil` (reported) when it is not UTF-8 or is empty.
    mutating func secretText(_ key: ConfigurationKey, file: String, contents: Data) -> String? {
        guard let text = String(data: contents, encoding: .utf8) else {
            report(key, "file \(file) is not UTF-8 text")
            return nil
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            report(key, "file \(file) is empty")
            return nil
        }
        return trimmed
    }
}
