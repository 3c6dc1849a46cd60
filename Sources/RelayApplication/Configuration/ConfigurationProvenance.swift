internal import Foundation

/// Where each key's value came from: the configuration file, a `PUSHRELAY_*` variable, or the default.
///
/// `check-config` prints it, so that an operator sees at once that, say, `store.url` comes from an environment
/// variable rather than from the file they edited. Values are shown as written, except secrets (`expo.access_token`)
/// and the credentials inside URLs (`store.url`, `upstream.proxy`), which are redacted.
package struct ConfigurationProvenance: Sendable, Equatable {
    /// Where one value came from.
    package enum Source: Sendable, Equatable {
        case file
        /// The variable that set it (`PUSHRELAY_STORE_URL`).
        case environment(String)
        /// Neither: the key takes its default.
        case defaultValue

        /// `file`, `environment`, `default`: the JSON spelling.
        package var name: String {
            switch self {
            case .file: "file"
            case .environment: "environment"
            case .defaultValue: "default"
            }
        }
    }

    package struct Entry: Sendable, Equatable {
        package var key: ConfigurationKey
        package var source: Source
        /// The value as set, redacted where secret; `nil` for a default.
        package var value: String?
    }

    /// Every key, in ``ConfigurationKey/all``'s order, then the keys set for each app (`apps.beta.apns.key_file`), by
    /// app.
    package var entries: [Entry]

    /// The keys that the file or the environment set.
    package var explicit: [Entry] { entries.filter { $0.source != .defaultValue } }

    /// The source of `key`.
    package func source(of key: ConfigurationKey) -> Source? {
        entries.first { $0.key == key }?.source
    }

    init(source: ConfigurationSource) {
        let appKeys = source.apps.keys.sorted().flatMap { app in
            ConfigurationKey.appKeys.map { $0.inApp(app) }.filter { source.settings[$0.path] != nil }
        }
        entries = (ConfigurationKey.all + appKeys).map { key in
            guard let setting = source.settings[key.path] else {
                return Entry(key: key, source: .defaultValue, value: nil)
            }
            let origin: Source = setting.origin == key.path ? .file : .environment(setting.origin)
            return Entry(key: key, source: origin, value: Self.display(setting.value, for: key))
        }
    }

    /// The value as TOML would write it, with secrets left out.
    static func display(_ value: ConfigurationValue, for key: ConfigurationKey) -> String {
        if key.base == .expoAccessToken { return "(secret)" }
        switch value {
        case .string(let text):
            let shown = (key == .storeURL || key == .upstreamProxy) ? redactingURLPassword(text) : text
            return "\"\(shown)\""
        case .integer(let integer): return "\(integer)"
        case .number(let number): return "\(number)"
        case .boolean(let boolean): return "\(boolean)"
        case .stringList(let list): return "[" + list.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        }
    }

    /// `postgres://relay:***@db:5432/relay` for `postgres://relay:s3cret@db:5432/relay`: the password of a URL's
    /// user information replaced, whatever the rest holds (written out rather than parsed, so that a URL that does
    /// not parse is still redacted).
    package static func redactingURLPassword(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<scheme.upperBound]) + userInfo[..<colon] + ":***" + rest[at...]
    }
}
