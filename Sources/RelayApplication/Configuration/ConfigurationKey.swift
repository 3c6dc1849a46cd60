internal import Foundation
import RelayCore

/// One key the configuration file knows, with its type.
///
/// ``all`` is the single list that unknown-key detection, the environment variable names and type checking read, so a
/// new key is added here and in the section that reads it. The provider keys (``appKeys``) exist once more for every
/// app named in the configuration: ``inApp(_:)`` gives `apps.beta.apns.key_file` for `apns.key_file`.
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
    /// The app whose `[apps.<app>]` table holds the key; `nil` for the top-level sections (the default app's).
    package var app: String?

    init(_ section: String, _ name: String, _ kind: Kind) {
        self.section = section
        self.name = name
        self.kind = kind
    }

    /// `apns.key_file`, or `apps.beta.apns.key_file`: how problems name the key.
    package var path: String { (app.map { "apps.\($0)." } ?? "") + "\(section).\(name)" }

    /// `PUSHRELAY_APNS_KEY_FILE`, or `PUSHRELAY_APPS_BETA_APNS_KEY_FILE` (a `-` in the app's name becomes `_`): the
    /// environment variable that overrides the key.
    package var environmentName: String {
        let app = app.map { "APPS_" + $0.uppercased().replacingOccurrences(of: "-", with: "_") + "_" } ?? ""
        return Self.environmentPrefix + app + "\(section)_\(name)".uppercased()
    }

    /// The same key at the top level: `apns.key_file` for `apps.beta.apns.key_file`.
    package var base: ConfigurationKey {
        var base = self
        base.app = nil
        return base
    }

    /// This key in `app`'s table: `apps.beta.apns.key_file`; the key itself for the default app.
    package func inApp(_ app: String) -> ConfigurationKey {
        var key = base
        key.app = app == AppName.default ? nil : app
        return key
    }

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
    package static let serverReadinessTimeoutMs = ConfigurationKey("server", "readiness_timeout_ms", .integer)
    package static let storeURL = ConfigurationKey("store", "url", .string)
    package static let storeJournalKeyFile = ConfigurationKey("store", "journal_key_file", .string)
    package static let storeRequestTimeoutMs = ConfigurationKey("store", "request_timeout_ms", .integer)
    package static let storeUnsavedLimit = ConfigurationKey("store", "unsaved_limit", .integer)
    package static let storeConnectTimeoutSeconds = ConfigurationKey("store", "connect_timeout_seconds", .integer)
    package static let upstreamTransport = ConfigurationKey("upstream", "transport", .string)
    package static let upstreamProxy = ConfigurationKey("upstream", "proxy", .string)
    package static let upstreamCAFile = ConfigurationKey("upstream", "ca_file", .string)
    package static let upstreamMaxConnections = ConfigurationKey("upstream", "max_connections", .integer)
    package static let upstreamMaxConcurrentStreams = ConfigurationKey("upstream", "max_concurrent_streams", .integer)
    package static let upstreamTimeoutMs = ConfigurationKey("upstream", "timeout_ms", .integer)
    package static let upstreamMaxAttempts = ConfigurationKey("upstream", "max_attempts", .integer)
    package static let upstreamRetryWindowSeconds = ConfigurationKey("upstream", "retry_window_seconds", .integer)
    package static let upstreamMaxAttemptsAfterTimeout = ConfigurationKey(
        "upstream", "max_attempts_after_timeout", .integer)
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
    package static let limitsCriticalReservePerHour = ConfigurationKey(
        "limits", "critical_reserve_per_hour", .integer)
    package static let limitsCriticalPerDevicePerMinute = ConfigurationKey(
        "limits", "critical_per_device_per_minute", .integer)
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
        serverReadinessTimeoutMs,
        storeURL,
        storeJournalKeyFile,
        storeRequestTimeoutMs,
        storeUnsavedLimit,
        storeConnectTimeoutSeconds,
        upstreamTransport,
        upstreamProxy,
        upstreamCAFile,
        upstreamMaxConnections,
        upstreamMaxConcurrentStreams,
        upstreamTimeoutMs,
        upstreamMaxAttempts,
        upstreamRetryWindowSeconds,
        upstreamMaxAttemptsAfterTimeout,
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
        limitsCriticalReservePerHour,
        limitsCriticalPerDevicePerMinute,
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

    /// The sections an app's table may hold: `[apps.beta.apns]`, `[apps.beta.fcm]`, `[apps.beta.expo]`.
    package static let appSections = ["apns", "fcm", "expo"]

    /// The keys each app may set: those of its sections but `expo.receipt_delay_seconds`, which is the relay's (one
    /// receipt poller for every app).
    package static let appKeys: [ConfigurationKey] = all.filter {
        appSections.contains($0.section) && $0 != expoReceiptDelaySeconds
    }

    /// The key at `path` (`apns.key_file`, `apps.beta.apns.key_file`); `nil` when there is none.
    package static func key(forPath path: String) -> ConfigurationKey? {
        if let key = byPath[path] { return key }
        let parts = path.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "apps", AppName.isValid(String(parts[1])), parts[1] != "default",
            let key = byPath["\(parts[2]).\(parts[3])"], appKeys.contains(key)
        else { return nil }
        return key.inApp(String(parts[1]))
    }

    /// The key `PUSHRELAY_APPS_BETA_APNS_KEY_FILE` overrides: an app's key is found by the ending of its variable
    /// (app names hold no `_`, so what comes before it, with `_` read as `-`, is the app's name).
    package static func key(forEnvironmentName name: String) -> ConfigurationKey? {
        if let key = byEnvironmentName[name] { return key }
        let prefix = environmentPrefix + "APPS_"
        guard name.hasPrefix(prefix) else { return nil }
        let rest = name.dropFirst(prefix.count)
        for key in appKeysByVariableLength {
            let suffix = "_" + key.environmentName.dropFirst(environmentPrefix.count)
            guard rest.hasSuffix(suffix), rest.count > suffix.count else { continue }
            let app = rest.dropLast(suffix.count).lowercased().replacingOccurrences(of: "_", with: "-")
            return AppName.isValid(app) && app != AppName.default ? key.inApp(app) : nil
        }
        return nil
    }

    /// Longest variable first, so that the longest ending that matches names the key.
    private static let appKeysByVariableLength = appKeys.sorted {
        $0.environmentName.count > $1.environmentName.count
    }

    /// Keys by path (`apns.key_file`).
    package static let byPath: [String: ConfigurationKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.path, $0) })

    /// Keys by environment variable (`PUSHRELAY_APNS_KEY_FILE`).
    package static let byEnvironmentName: [String: ConfigurationKey] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.environmentName, $0) }
    )
}
