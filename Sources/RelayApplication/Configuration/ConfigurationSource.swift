internal import RelayCore
internal import TOMLKit

/// The configuration's raw settings: the TOML document with the environment's overrides applied, each value checked
/// against its key's type and remembered with the name it came from.
///
/// Problems found here: TOML syntax, unknown sections, keys and `PUSHRELAY_*` variables (with a suggestion for near
/// misses), and values of the wrong type. A rejected value is left out of ``settings`` and its path recorded in
/// ``rejected``, so later checks neither use it nor report it a second time.
struct ConfigurationSource {
    /// A value and where it came from.
    struct Setting: Equatable, Sendable {
        var value: ConfigurationValue
        /// The key path (`apns.key_file`) for the file, the variable (`PUSHRELAY_APNS_KEY_FILE`) for the environment.
        var origin: String
    }

    /// Accepted values by key path.
    private(set) var settings: [String: Setting] = [:]
    /// Key paths whose value was set but rejected.
    private(set) var rejected: Set<String> = []
    private(set) var problems: [ConfigurationError.Problem] = []
    /// The apps named by `[apps.<name>]` tables or `PUSHRELAY_APPS_*` variables, each with the sections it has
    /// (`apns`, `fcm`, `expo`), an empty table included.
    private(set) var apps: [String: Set<String>] = [:]

    /// Reads `toml` and then `environment`, whose overrides win.
    ///
    /// - Parameter documentName: How problems with the document as a whole (its syntax) name it.
    init(toml: String, documentName: String, environment: [String: String]) {
        readDocument(toml, documentName: documentName)
        applyEnvironment(environment)
    }

    // MARK: - TOML

    private mutating func readDocument(_ toml: String, documentName: String) {
        let document: TOMLTable
        do {
            document = try TOMLTable(string: toml)
        } catch let error as TOMLParseError {
            let position = error.source.begin
            report(
                documentName,
                "invalid TOML at line \(position.line), column \(position.column): \(error.description)"
            )
            return
        } catch {
            report(documentName, "invalid TOML")
            return
        }
        for name in document.keys.sorted() {
            guard let value = document[name] else { continue }
            if name == "apps" {
                readApps(value)
                continue
            }
            guard ConfigurationKey.sections.contains(name) else {
                reportUnknownTopLevel(name, isTable: value.type == .table)
                continue
            }
            guard let section = value.table else {
                report(name, "expected a table ([\(name)]), found \(Self.describe(value.type))")
                continue
            }
            for keyName in section.keys.sorted() {
                guard let keyValue = section[keyName] else { continue }
                readValue(keyValue, section: name, name: keyName)
            }
        }
    }

    /// `[apps.<name>.apns]`, `[apps.<name>.fcm]`, `[apps.<name>.expo]`: each app's provider sections.
    private mutating func readApps(_ value: any TOMLValueConvertible) {
        guard let table = value.table else {
            report("apps", "expected a table of apps ([apps.<name>.apns] …), found \(Self.describe(value.type))")
            return
        }
        for app in table.keys.sorted() {
            guard let appValue = table[app] else { continue }
            let path = "apps.\(app)"
            guard AppName.isValid(app) else {
                report(path, "an app's name must be \(AppName.rule)")
                continue
            }
            guard app != AppName.default else {
                report(path, "the app named default is configured by the top-level [apns], [fcm] and [expo] sections")
                continue
            }
            guard let sections = appValue.table else {
                report(path, "expected a table ([\(path).apns] …), found \(Self.describe(appValue.type))")
                continue
            }
            apps[app, default: []] = []
            for section in sections.keys.sorted() {
                guard let sectionValue = sections[section] else { continue }
                guard ConfigurationKey.appSections.contains(section) else {
                    let allowed = ConfigurationKey.appSections.map { "[\(path).\($0)]" }.joined(separator: ", ")
                    report("\(path).\(section)", "unknown section; an app has \(allowed)")
                    continue
                }
                guard let keys = sectionValue.table else {
                    report(
                        "\(path).\(section)",
                        "expected a table ([\(path).\(section)]), found \(Self.describe(sectionValue.type))")
                    continue
                }
                apps[app, default: []].insert(section)
                for keyName in keys.keys.sorted() {
                    guard let keyValue = keys[keyName] else { continue }
                    readValue(keyValue, section: section, name: keyName, app: app)
                }
            }
        }
    }

    private mutating func readValue(
        _ value: any TOMLValueConvertible,
        section: String,
        name: String,
        app: String? = nil
    ) {
        let prefix = app.map { "apps.\($0)." } ?? ""
        let path = "\(prefix)\(section).\(name)"
        guard let key = ConfigurationKey.key(forPath: path) else {
            reportUnknownKey(name, section: section, app: app)
            return
        }
        switch Self.convert(value, to: key.kind) {
        case .success(.string(let string)) where string.allSatisfy(\.isWhitespace):
            // An empty string counts as unset, as an empty environment variable does.
            break
        case .success(let converted):
            settings[path] = Setting(value: converted, origin: path)
        case .failure(let error):
            rejected.insert(path)
            report(path, error.message)
        }
    }

    /// `value` as a value of `kind`; an integer is accepted where a number is expected.
    private static func convert(
        _ value: any TOMLValueConvertible,
        to kind: ConfigurationKey.Kind
    ) -> Result<ConfigurationValue, ConfigurationSyntaxError> {
        let mismatch = ConfigurationSyntaxError("expected \(kind.expectation), found \(describe(value.type))")
        switch kind {
        case .string:
            guard let string = value.string else { return .failure(mismatch) }
            return .success(.string(string))
        case .integer:
            guard let integer = value.int else { return .failure(mismatch) }
            return .success(.integer(integer))
        case .number:
            if let integer = value.int { return .success(.number(Double(integer))) }
            guard let number = value.double, number.isFinite else { return .failure(mismatch) }
            return .success(.number(number))
        case .boolean:
            guard let boolean = value.bool else { return .failure(mismatch) }
            return .success(.boolean(boolean))
        case .stringList:
            guard let array = value.array else { return .failure(mismatch) }
            var strings: [String] = []
            for (index, item) in array.enumerated() {
                guard let string = item.string else {
                    return .failure(
                        ConfigurationSyntaxError(
                            "expected an array of strings, but item \(index + 1) is \(describe(item.type))"
                        )
                    )
                }
                strings.append(string)
            }
            return .success(.stringList(strings))
        }
    }

    /// `"an integer"`: a TOML type for "found …" messages.
    private static func describe(_ type: TOMLType) -> String {
        switch type {
        case .table: "a table"
        case .array: "an array"
        case .string: "a string"
        case .int: "an integer"
        case .double: "a floating-point number"
        case .bool: "a boolean"
        case .date: "a date"
        case .time: "a time"
        case .dateTime: "a date-time"
        }
    }

    private mutating func reportUnknownTopLevel(_ name: String, isTable: Bool) {
        if isTable {
            var message = "unknown section [\(name)]"
            if let suggestion = ConfigurationSuggestion.closest(to: name, among: ConfigurationKey.sections) {
                message += "; did you mean [\(suggestion)]?"
            }
            report(name, message)
            return
        }
        var message = "unknown key outside any section"
        if let home = ConfigurationKey.all.first(where: { $0.name == name }) {
            message += "; did you mean \(home.path) (under [\(home.section)])?"
        }
        report(name, message)
    }

    private mutating func reportUnknownKey(_ name: String, section: String, app: String? = nil) {
        let path = (app.map { "apps.\($0)." } ?? "") + "\(section).\(name)"
        if app != nil, ConfigurationKey.byPath["\(section).\(name)"] != nil {
            report(path, "is the relay's, not an app's: set it as \(section).\(name)")
            return
        }
        let siblings = ConfigurationKey.all.filter { $0.section == section }.map(\.name)
        var message = "unknown key"
        if let suggestion = ConfigurationSuggestion.closest(to: name, among: siblings) {
            message += "; did you mean \(app.map { "apps.\($0)." } ?? "")\(section).\(suggestion)?"
        } else if app == nil, let elsewhere = ConfigurationKey.all.first(where: { $0.name == name }) {
            message += " in [\(section)]; did you mean \(elsewhere.path)?"
        }
        report(path, message)
    }

    // MARK: - Environment

    private mutating func applyEnvironment(_ environment: [String: String]) {
        let overrides = environment.keys.filter {
            $0.hasPrefix(ConfigurationKey.environmentPrefix) && !ConfigurationKey.otherVariables.contains($0)
        }.sorted()
        for name in overrides {
            guard let text = environment[name] else { continue }
            guard let key = ConfigurationKey.key(forEnvironmentName: name) else {
                var message = "no configuration key has this environment variable"
                // Compared without the shared prefix, which would otherwise make every name look close.
                let prefixLength = ConfigurationKey.environmentPrefix.count
                let candidates = ConfigurationKey.all.map { $0.environmentName.dropFirst(prefixLength) }
                let typed = String(name.dropFirst(prefixLength))
                if let suggestion = ConfigurationSuggestion.closest(to: typed, among: candidates.map(String.init)) {
                    message += "; did you mean \(ConfigurationKey.environmentPrefix)\(suggestion)?"
                }
                report(name, message)
                continue
            }
            if let app = key.app { apps[app, default: []].insert(key.section) }
            // The environment wins over the file, whether the file's value was accepted or not.
            rejected.remove(key.path)
            switch ConfigurationValue.reading(environment: text, as: key.kind) {
            case .value(let value):
                settings[key.path] = Setting(value: value, origin: name)
            case .unset:
                settings[key.path] = nil
            case .invalid(let message):
                settings[key.path] = nil
                rejected.insert(key.path)
                report(name, message)
            }
        }
    }

    private mutating func report(_ key: String, _ message: String) {
        problems.append(ConfigurationError.Problem(key: key, message: message))
    }
}
