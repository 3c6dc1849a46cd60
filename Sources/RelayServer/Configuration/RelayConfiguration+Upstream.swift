package import RelayCore

extension RelayConfiguration {
    /// `[upstream]`: the HTTP/2 connections to APNs, FCM and Expo.
    package struct Upstream: Sendable, Equatable {
        /// `ca_file`: absolute path of extra PEM certificates trusted for upstream TLS, besides the system bundle.
        package var caFile: String?
        /// `max_connections`: HTTP/2 connections per upstream origin.
        package var maxConnections: Int
        /// `max_concurrent_streams`: streams per connection for every upstream; `nil` uses
        /// ``defaultMaxConcurrentStreams(for:)``.
        package var maxConcurrentStreams: Int?
        /// `timeout_ms`: deadline of one upstream request in milliseconds, time queued for a connection included.
        package var timeoutMs: Int
        /// `max_attempts`: attempts per push, the first one included, for retryable outcomes.
        package var maxAttempts: Int

        package init(
            caFile: String? = nil,
            maxConnections: Int = 2,
            maxConcurrentStreams: Int? = nil,
            timeoutMs: Int = 10_000,
            maxAttempts: Int = 3
        ) {
            self.caFile = caFile
            self.maxConnections = maxConnections
            self.maxConcurrentStreams = maxConcurrentStreams
            self.timeoutMs = timeoutMs
            self.maxAttempts = maxAttempts
        }

        /// The most attempts `max_attempts` may ask for.
        static let attemptLimit = 10
        /// The shortest `timeout_ms` accepted: below it even a warm connection cannot answer reliably.
        static let minimumTimeoutMs = 100

        /// The stream limit used for `provider`: ``maxConcurrentStreams`` when set, otherwise 1000 for APNs (Apple
        /// allows many streams per connection) and 100, libcurl's default, for FCM and Expo.
        package func concurrentStreams(for provider: Provider) -> Int {
            maxConcurrentStreams ?? Self.defaultMaxConcurrentStreams(for: provider)
        }

        /// The stream limit used when `max_concurrent_streams` is unset.
        package static func defaultMaxConcurrentStreams(for provider: Provider) -> Int {
            switch provider {
            case .apns: 1000
            case .fcm, .expo: 100
            }
        }
    }
}
