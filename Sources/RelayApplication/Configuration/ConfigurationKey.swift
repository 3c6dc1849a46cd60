/// One key the configuration file knows, with its type.
///
/// ``all`` is the single list that unknown-key detection, the environment variable names and type checking read, so a
/// new key is added here and in the section that reads it.
struct ConfigurationKey: Hashable, Sendable {
    /// The types a value can have.
    enum Kind: Hashable, Sendable {
        case string
        case integer
        /// An integer or a floating-point number.
        case number
        case boolean
        case stringList
    }

    /// The TOML table: `apns`.
    var section: String
    /// The key inside the table: `key_file`.
    var name: String
    var kind: Kind

    init(_ section: String, _ name: String, _ kind: Kind) {
        self.section = section
        self.name = name
        self.kind = kind
    }

    /// `apns.key_file`: how problems name the key.
    var path: String { "\(section).\(name)" }

    /// `PUSHRELAY_APNS_KEY_FILE`: the environment variable that overrides the key.
    var environmentName: String { Self.environmentPrefix + "\(section)_\(name)".uppercased() }

    /// Only variables with this prefix are read as overrides.
    static let environmentPrefix = "PUSHRELAY_"

    /// Every key, in the order of Docs/configuration.md.
    static let all: [ConfigurationKey] = [
        .init("server", "listen", .string),
        .init("server", "tls_cert_file", .string),
        .init("server", "tls_key_file", .string),
        .init("server", "trusted_proxies", .stringList),
        .init("store", "url", .string),
        .init("upstream", "transport", .string),
        .init("upstream", "proxy", .string),
        .init("upstream", "ca_file", .string),
        .init("upstream", "max_connections", .integer),
        .init("upstream", "max_concurrent_streams", .integer),
        .init("upstream", "timeout_ms", .integer),
        .init("upstream", "max_attempts", .integer),
        .init("upstream", "ping_interval_seconds", .integer),
        .init("upstream", "ping_timeout_seconds", .integer),
        .init("upstream", "max_connection_age_seconds", .integer),
        .init("upstream", "idle_timeout_seconds", .integer),
        .init("apns", "team_id", .string),
        .init("apns", "key_id", .string),
        .init("apns", "key_file", .string),
        .init("apns", "topic", .string),
        .init("apns", "environment", .string),
        .init("apns", "endpoint", .string),
        .init("apns", "sandbox_endpoint", .string),
        .init("fcm", "service_account_file", .string),
        .init("fcm", "endpoint", .string),
        .init("expo", "access_token", .string),
        .init("expo", "access_token_file", .string),
        .init("expo", "endpoint", .string),
        .init("expo", "receipt_delay_seconds", .integer),
        .init("android", "critical_channel_id", .string),
        .init("limits", "rate_per_second", .number),
        .init("limits", "burst", .integer),
        .init("limits", "daily_quota", .integer),
        .init("limits", "per_device_per_minute", .integer),
        .init("audit", "enabled", .boolean),
        .init("audit", "instance", .string),
        .init("audit", "signing_key_file", .string),
        .init("audit", "checkpoint_interval_seconds", .integer),
        .init("audit", "retention_days", .integer),
        .init("receipts", "ttl_hours", .integer),
        .init("receipts", "wait_ms", .integer),
        .init("logging", "format", .string),
        .init("logging", "level", .string),
    ]

    /// The sections, in order.
    static let sections: [String] = all.reduce(into: []) { sections, key in
        if sections.last != key.section { sections.append(key.section) }
    }

    /// Keys by path (`apns.key_file`).
    static let byPath: [String: ConfigurationKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.path, $0) })

    /// Keys by environment variable (`PUSHRELAY_APNS_KEY_FILE`).
    static let byEnvironmentName: [String: ConfigurationKey] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.environmentName, $0) }
    )
}
