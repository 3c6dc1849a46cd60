package import RelayCore

/// Everything the relay reads from its configuration file and the `PUSHRELAY_*` environment.
///
/// ### Overview
/// The file is TOML with one table per concern (`[server]`, `[store]`, `[upstream]`, `[apns]`, …);
/// Docs/configuration.md lists every key with its default. ``load(path:environment:)`` reads a file,
/// ``parse(toml:directory:environment:)`` reads text (tests), and ``defaults(directory:)`` is the configuration
/// without any file.
///
/// ### Implementation
/// Loading runs in three steps, each collecting problems instead of stopping at the first one:
/// 1. `ConfigurationSource` turns the TOML document and the environment into one flat map from key path
///    (`"apns.key_file"`) to a typed value and the name it came from (the key, or `PUSHRELAY_APNS_KEY_FILE`). Unknown
///    sections, keys and variables, syntax errors and type mismatches are reported here, against the single key list
///    in `ConfigurationKey`.
/// 2. `ConfigurationReader` builds each section from that map: defaults for absent keys, ranges, paths resolved against
///    the file's folder, files checked and secrets read.
/// 3. If any step found a problem, ``ConfigurationError`` carries all of them; otherwise the result is complete and
///    valid, so nothing downstream validates it again.
///
/// Secrets (the APNs key, the FCM private key, the Expo access token) are held as ``Secret``, whose descriptions are
/// redacted, and no problem message ever quotes them.
package struct RelayConfiguration: Sendable, Equatable {
    /// `[server]`: where the HTTP API listens.
    package var server: Server
    /// `[store]`: where tenants, keys, receipts and the audit log live.
    package var store: Store
    /// `[upstream]`: the HTTP/2 connections to APNs, FCM and Expo.
    package var upstream: Upstream
    /// `[apns]`: `nil` when the section has no `key_file`, meaning APNs is not configured.
    package var apns: APNs?
    /// `[fcm]`: `nil` when the section has no `service_account_file`, meaning FCM is not configured.
    package var fcm: FCM?
    /// `[expo]`: always configured, because Expo needs no credential (the access token is optional).
    package var expo: Expo
    /// `[apps.<name>]`: the apps beside the default one (whose credentials are ``apns``, ``fcm`` and ``expo``), by
    /// name.
    package var apps: [String: App]
    /// `[android]`: Android-specific delivery settings.
    package var android: Android
    /// `[limits]`: the limits new tenants start with.
    package var limits: RateLimits
    /// `[limits] critical_per_device_per_minute`: critical alerts per device token per minute admitted within a
    /// tenant's critical reserve, for every tenant.
    package var criticalPerDevicePerMinute: Int
    /// `[audit]`: how long the audit log is kept.
    package var audit: Audit
    /// `[receipts]`: how long receipts are kept and how long a push request waits for outcomes.
    package var receipts: Receipts
    /// `[logging]`: the log format and level.
    package var logging: Logging

    package init(
        server: Server = Server(),
        store: Store,
        upstream: Upstream = Upstream(),
        apns: APNs? = nil,
        fcm: FCM? = nil,
        expo: Expo = Expo(),
        apps: [String: App] = [:],
        android: Android = Android(),
        limits: RateLimits = RateLimits(),
        criticalPerDevicePerMinute: Int = RelayConfiguration.defaultCriticalPerDevicePerMinute,
        audit: Audit = Audit(),
        receipts: Receipts = Receipts(),
        logging: Logging = Logging()
    ) {
        self.server = server
        self.store = store
        self.upstream = upstream
        self.apns = apns
        self.fcm = fcm
        self.expo = expo
        self.apps = apps
        self.android = android
        self.limits = limits
        self.criticalPerDevicePerMinute = criticalPerDevicePerMinute
        self.audit = audit
        self.receipts = receipts
        self.logging = logging
    }

    /// The configuration without a file: every default, no provider credential.
    ///
    /// This is what `pushrelay serve` uses without `--config`, and the base the demo adjusts.
    ///
    /// - Parameter directory: The folder a relative SQLite path resolves against.
    package static func defaults(directory: String) -> RelayConfiguration {
        RelayConfiguration(store: Store(directory: directory))
    }

    /// `[limits] critical_per_device_per_minute` when the file does not set it.
    package static let defaultCriticalPerDevicePerMinute = 10
}
