/// One key the configuration file knows, with its type.
///
/// ``all`` is the single list that unknown-key detection, the environment variable names and type checking read, so a
/// new key is added here and in the section that reads it.
package struct ConfigurationKey: Hashable, Sendable {
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
    package var section: String
    /// The key inside the table: `key_file`.
    package var name: String
    var kind: Kind

    init(_ section: String, _ name: String, _ kind: Kind) {
        self.section = section
        self.name = name
        self.kind = kind
    }

    /// `apns.key_file`: how problems name the key.
    package var path: String { "\(section).\(name)" }

    /// `PUSHRELAY_APNS_KEY_FILE`: the environment variable that overrides the key.
    package var environmentName: String { Self.environmentPrefix + "\(section)_\(name)".uppercased() }

    /// Only variables with this prefix are read as overrides.
    package static let environmentPrefix = "PUSHRELAY_"

    /// Variables with the prefix that are not overrides of a key: which file to read (`PUSHRELAY_CONFIG`) and who
    /// the command-line tools record as the actor (`PUSHRELAY_ACTOR`).
    package static let otherVariables: Set<String> = ["PUSHRELAY_CONFIG", "PUSHRELAY_ACTOR"]

    // One constant per key: the reader, the environment mapping, `check-config` and the test of
    // Docs/configuration.md's tables all use these, so a key is spelled once.
    package static let serverListen = ConfigurationKey("server", "listen", .string)
    package static let serverTLSCertFile = ConfigurationKey("server", "tls_cert_file", .string)
    package static let serverTLSKeyFile = ConfigurationKey("server", "tls_key_file", .string)
    package static let serverTrustedProxies = ConfigurationKey("server", "trusted_proxies", .stringList)
    package static let serverDrainSeconds = ConfigurationKey("server", "drain_seconds", .integer)
    package static let serverMaxPendingNotifications = ConfigurationKey(
        "server", "max_pending_notifications", .integer)
    package static let serverHeaderTimeoutMs = ConfigurationKey("server", "header_timeout_ms", .integer)
    package static let serverBodyTimeoutMs = ConfigurationKey("server", "body_timeout_ms", .integer)
    package static let serverBodyMinBytesPerSecond = ConfigurationKey(
        "server", "body_min_bytes_per_second", .integer)
    package static let serverIdleTimeoutMs = ConfigurationKey("server", "idle_timeout_ms", .integer)
    package static let serverMaxConnections = ConfigurationKey("server", "max_connections", .integer)
    package static let storeURL = ConfigurationKey("store", "url", .string)
    package static let storeJournalKeyFile = ConfigurationKey("store", "journal_key_file", .string)
    package static let upstreamTransport = ConfigurationKey("upstream", "transport", .string)
    package static let upstreamProxy = ConfigurationKey("upstream", "proxy", .string)
    package static let upstreamCAFile = ConfigurationKey("upstream", "ca_file", .string)
    package static let upstreamMaxConnections = ConfigurationKey("upstream", "max_connections", .integer)
    package static let upstreamMaxConcurrentStreams = ConfigurationKey("upstream", "max_concurrent_streams", .integer)
    package static let upstreamTimeoutMs = ConfigurationKey("upstream", "timeout_ms", .integer)
    package static let upstreamMaxAttempts = ConfigurationKey("upstream", "max_attempts", .integer)
    package static let upstreamRetryWindowSeconds = ConfigurationKey("upstream", "retry_window_seconds", .integer)
    package static let upstreamPingIntervalSeconds = ConfigurationKey("upstream", "ping_interval_seconds", .integer)
    package static let upstreamPingTimeoutSeconds = ConfigurationKey("upstream", "ping_timeout_seconds", .integer)
    package static let upstreamMaxConnectionAgeSeconds = ConfigurationKey(
        "upstream", "max_connection_age_seconds", .integer)
    package static let upstreamIdleTimeoutSeconds = ConfigurationKey("upstream", "idle_timeout_seconds", .integer)
    package static let apnsTeamID = ConfigurationKey("apns", "team_id", .string)
    package static let apnsKeyID = ConfigurationKey("apns", "key_id", .string)
    package static let apnsKeyFile = ConfigurationKey("apns", "key_file", .string)
    package static let apnsTopic = ConfigurationKey("apns", "topic", .string)
    package static let apnsEnvironment = ConfigurationKey("apns", "environment", .string)
    package static let apnsEndpoint = ConfigurationKey("apns", "endpoint", .string)
    package static let apnsSandboxEndpoint = ConfigurationKey("apns", "sandbox_endpoint", .string)
    package static let fcmServiceAccountFile = ConfigurationKey("fcm", "service_account_file", .string)
    package static let fcmEndpoint = ConfigurationKey("fcm", "endpoint", .string)
    package static let expoAccessToken = ConfigurationKey("expo", "access_token", .string)
    package static let expoAccessTokenFile = ConfigurationKey("expo", "access_token_file", .string)
    package static let expoEndpoint = ConfigurationKey("expo", "endpoint", .string)
    package static let expoReceiptDelaySeconds = ConfigurationKey("expo", "receipt_delay_seconds", .integer)
    package static let androidCriticalChannelID = ConfigurationKey("android", "critical_channel_id", .string)
    package static let limitsRatePerSecond = ConfigurationKey("limits", "rate_per_second", .number)
    package static let limitsBurst = ConfigurationKey("limits", "burst", .integer)
    package static let limitsDailyQuota = ConfigurationKey("limits", "daily_quota", .integer)
    package static let limitsPerDevicePerMinute = ConfigurationKey("limits", "per_device_per_minute", .integer)
    package static let auditEnabled = ConfigurationKey("audit", "enabled", .boolean)
    package static let auditInstance = ConfigurationKey("audit", "instance", .string)
    package static let auditSigningKeyFile = ConfigurationKey("audit", "signing_key_file", .string)
    package static let auditCheckpointIntervalSeconds = ConfigurationKey(
        "audit", "checkpoint_interval_seconds", .integer)
    package static let auditRetentionDays = ConfigurationKey("audit", "retention_days", .integer)
    package static let receiptsTtlHours = ConfigurationKey("receipts", "ttl_hours", .integer)
    package static let receiptsWaitMs = ConfigurationKey("receipts", "wait_ms", .integer)
    package static let loggingFormat = ConfigurationKey("logging", "format", .string)
    package static let loggingLevel = ConfigurationKey("logging", "level", .string)

    /// Every key, in the order of Docs/configuration.md.
    package static let all: [ConfigurationKey] = [
        serverListen,
        serverTLSCertFile,
        serverTLSKeyFile,
        serverTrustedProxies,
        serverDrainSeconds,
        serverMaxPendingNotifications,
        serverHeaderTimeoutMs,
        serverBodyTimeoutMs,
        serverBodyMinBytesPerSecond,
        serverIdleTimeoutMs,
        serverMaxConnections,
        storeURL,
        storeJournalKeyFile,
        upstreamTransport,
        upstreamProxy,
        upstreamCAFile,
        upstreamMaxConnections,
        upstreamMaxConcurrentStreams,
        upstreamTimeoutMs,
        upstreamMaxAttempts,
        upstreamRetryWindowSeconds,
        upstreamPingIntervalSeconds,
        upstreamPingTimeoutSeconds,
        upstreamMaxConnectionAgeSeconds,
        upstreamIdleTimeoutSeconds,
        apnsTeamID,
        apnsKeyID,
        apnsKeyFile,
        apnsTopic,
        apnsEnvironment,
        apnsEndpoint,
        apnsSandboxEndpoint,
        fcmServiceAccountFile,
        fcmEndpoint,
        expoAccessToken,
        expoAccessTokenFile,
        expoEndpoint,
        expoReceiptDelaySeconds,
        androidCriticalChannelID,
        limitsRatePerSecond,
        limitsBurst,
        limitsDailyQuota,
        limitsPerDevicePerMinute,
        auditEnabled,
        auditInstance,
        auditSigningKeyFile,
        auditCheckpointIntervalSeconds,
        auditRetentionDays,
        receiptsTtlHours,
        receiptsWaitMs,
        loggingFormat,
        loggingLevel,
    ]

    /// The sections, in order.
    package static let sections: [String] = all.reduce(into: []) { sections, key in
        if sections.last != key.section { sections.append(key.section) }
    }

    /// Keys by path (`apns.key_file`).
    package static let byPath: [String: ConfigurationKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.path, $0) })

    /// Keys by environment variable (`PUSHRELAY_APNS_KEY_FILE`).
    package static let byEnvironmentName: [String: ConfigurationKey] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.environmentName, $0) }
    )
}
