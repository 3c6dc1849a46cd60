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

        /// The stream limit used for `provider`: ``maxConcurrentStreams`` when set, otherwise 500 for APNs and 100,
        /// libcurl's default, for FCM and Expo. Apple allows up to 1,000 streams per connection, but libcurl 7.88.1 keeps
        /// about 25 KB per stream in flight (its 16 KiB minimum upload buffer among it): 2 × 1,000 streams cost 45 MB of
        /// peak memory for no throughput on this class of machine (Docs/benchmarks.md), while 2 × 500 streams still
        /// carry 10,000 notifications/s at a 100 ms round trip, about libcurl's own ceiling here.
        package func concurrentStreams(for provider: Provider) -> Int {
            maxConcurrentStreams ?? Self.defaultMaxConcurrentStreams(for: provider)
        }

        /// The stream limit used when `max_concurrent_streams` is unset.
        package static func defaultMaxConcurrentStreams(for provider: Provider) -> Int {
            switch provider {
            case .apns: 500
            case .fcm, .expo: 100
            }
        }
    }
}
