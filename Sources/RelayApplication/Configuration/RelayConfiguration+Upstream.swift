package import RelayCore

extension RelayConfiguration {
    /// `[upstream]`: the HTTP/2 connections to APNs, FCM and Expo.
    package struct Upstream: Sendable, Equatable {
        /// `transport`: the HTTP/2 implementation. Without the key, ``Transport/curl`` when a ``proxy`` is set,
        /// otherwise ``Transport/nghttp2``.
        package var transport: Transport
        /// `proxy`: the HTTP CONNECT proxy every upstream connection goes through; `nil` for direct connections.
        package var proxy: Proxy?
        /// `ca_file`: absolute path of extra PEM certificates trusted for upstream TLS, besides the system bundle.
        package var caFile: String?
        /// `max_connections`: HTTP/2 connections per upstream origin.
        package var maxConnections: Int
        /// `max_concurrent_streams`: streams per connection for every upstream; `nil` uses
        /// ``defaultMaxConcurrentStreams(for:)``.
        package var maxConcurrentStreams: Int?
        /// `timeout_ms`: deadline of one upstream request in milliseconds, time queued for a connection included.
        package var timeoutMs: Int
        /// `max_attempts`: deprecated, without effect. It bounded the attempts of a push; transient failures are now
        /// retried until the push's deadline (``retryWindowSeconds``). Still read and checked (1 to 10), so that
        /// configuration files that set it keep loading.
        package var maxAttempts: Int
        /// `retry_window_seconds`: the longest a push is retried through transient failures and upstream outages,
        /// from the start of its sending; a push whose `ttl` or `expiration` ends sooner stops then.
        package var retryWindowSeconds: Int
        /// `max_attempts_after_timeout`: how many times a push is sent again after attempts that were sent and got no
        /// answer within ``timeoutMs`` (each may have been delivered, so each retry risks a duplicate); the next such
        /// timeout ends it `ProviderUnavailable`. 0 never sends it again after one.
        package var maxAttemptsAfterTimeout: Int
        /// `ping_interval_seconds`: a connection on which nothing has arrived for this long gets a PING; 0 never
        /// sends one.
        package var pingIntervalSeconds: Int
        /// `ping_timeout_seconds`: an unanswered PING closes its connection after this long.
        package var pingTimeoutSeconds: Int
        /// `max_connection_age_seconds`: a connection this old takes no new streams and is replaced (fresh DNS).
        package var maxConnectionAgeSeconds: Int
        /// `idle_timeout_seconds`: a connection without streams for this long is closed.
        package var idleTimeoutSeconds: Int

        package init(
            transport: Transport = .nghttp2,
            proxy: Proxy? = nil,
            caFile: String? = nil,
            maxConnections: Int = 2,
            maxConcurrentStreams: Int? = nil,
            timeoutMs: Int = 10_000,
            maxAttempts: Int = 3,
            retryWindowSeconds: Int = 300,
            maxAttemptsAfterTimeout: Int = 1,
            pingIntervalSeconds: Int = 60,
            pingTimeoutSeconds: Int = 10,
            maxConnectionAgeSeconds: Int = 14_400,
            idleTimeoutSeconds: Int = 3300
        ) {
            self.transport = transport
            self.proxy = proxy
            self.caFile = caFile
            self.maxConnections = maxConnections
            self.maxConcurrentStreams = maxConcurrentStreams
            self.timeoutMs = timeoutMs
            self.maxAttempts = maxAttempts
            self.retryWindowSeconds = retryWindowSeconds
            self.maxAttemptsAfterTimeout = maxAttemptsAfterTimeout
            self.pingIntervalSeconds = pingIntervalSeconds
            self.pingTimeoutSeconds = pingTimeoutSeconds
            self.maxConnectionAgeSeconds = maxConnectionAgeSeconds
            self.idleTimeoutSeconds = idleTimeoutSeconds
        }

        /// The most attempts `max_attempts` may ask for.
        static let attemptLimit = 10
        /// The most `max_attempts_after_timeout` may allow.
        static let attemptsAfterTimeoutLimit = 10
        /// The longest `retry_window_seconds`: a day. The notifications being retried are held in memory.
        static let retryWindowLimitSeconds = 86_400
        /// The shortest `timeout_ms` accepted: below it even a warm connection cannot answer reliably.
        static let minimumTimeoutMs = 100
        /// The longest `ping_interval_seconds`: a day.
        static let pingIntervalLimitSeconds = 86_400
        /// The longest `ping_timeout_seconds`.
        static let pingTimeoutLimitSeconds = 300
        /// The shortest `max_connection_age_seconds`: shorter would reconnect (and re-handshake) all the time.
        static let minimumConnectionAgeSeconds = 60

        /// The stream limit used for `provider`: ``maxConcurrentStreams`` when set, otherwise 500 for APNs and 100 for
        /// FCM and Expo. It is a client-side cap per connection; the server's own `SETTINGS_MAX_CONCURRENT_STREAMS`
        /// still applies. Apple allows up to 1,000 streams per connection, but 2 × 500 streams already carry 10,000
        /// notifications/s at a 100 ms round trip and keep peak memory lower (Docs/benchmarks.md).
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

extension RelayConfiguration.Upstream {
    /// `transport`: which HTTP/2 implementation carries the pushes.
    package enum Transport: String, Sendable, Equatable, CaseIterable {
        /// nghttp2 sessions over OpenSSL: the default.
        case nghttp2
        /// libcurl: the transport that can go through a ``Proxy``.
        case curl
    }

    /// `proxy`: an `http://[user:password@]host:port` HTTP CONNECT proxy.
    ///
    /// Every upstream connection is a tunnel through it; TLS to APNs, FCM or Expo runs inside the tunnel, end to end,
    /// so the proxy sees host names only. The URL may hold a password: it is kept as a ``RelayConfiguration/Secret``,
    /// and the description is ``redacted``.
    package struct Proxy: Sendable, Equatable, CustomStringConvertible {
        /// The URL as configured, credentials included: what the transport is given.
        package var url: RelayConfiguration.Secret
        /// The host as written in the URL (an IPv6 address in brackets).
        package var host: String
        package var port: Int
        /// Whether the URL carries a user name (and password), sent as Basic proxy authorisation.
        package var hasCredentials: Bool

        package init(url: String, host: String, port: Int, hasCredentials: Bool) {
            self.url = RelayConfiguration.Secret(url)
            self.host = host
            self.port = port
            self.hasCredentials = hasCredentials
        }

        /// `http://proxy.example:3128`, or `http://***@proxy.example:3128` with credentials: never the password.
        package var redacted: String { "http://\(hasCredentials ? "***@" : "")\(host):\(port)" }

        package var description: String { redacted }
    }
}
