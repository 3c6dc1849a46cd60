extension RelayConfiguration {
    /// `[server]`: where the relay's HTTP API listens, and how it treats proxies.
    package struct Server: Sendable, Equatable {
        /// `listen`: address and port of the HTTP API.
        package var listen: Address
        /// `tls_cert_file`: absolute path of the PEM certificate chain; `nil` serves plain HTTP. Set together with
        /// ``tlsKeyFile``.
        package var tlsCertFile: String?
        /// `tls_key_file`: absolute path of the PEM private key for ``tlsCertFile``.
        package var tlsKeyFile: String?
        /// `trusted_proxies`: CIDRs (or single addresses) of reverse proxies whose forwarded client address is trusted.
        package var trustedProxies: [String]
        /// `drain_seconds`: how long shutdown lets accepted notifications finish before it journals what is left for
        /// the next start.
        package var drainSeconds: Int
        /// `max_pending_notifications`: the most notifications accepted and not concluded at once; beyond it, push
        /// requests get 503 `QUEUE_FULL`.
        package var maxPendingNotifications: Int

        /// `header_timeout_ms`: a new connection (its TLS handshake included) has this long to send its first
        /// request's headers.
        package var headerTimeoutMs: Int
        /// `body_timeout_ms`: a request's body must have arrived whole this long after its headers, unless it keeps
        /// arriving at ``bodyMinBytesPerSecond``.
        package var bodyTimeoutMs: Int
        /// `body_min_bytes_per_second`: a body still arriving at the body timeout gets another `body_timeout_ms` each
        /// time it has arrived at least this fast over the period just ended; 0 makes the body timeout a fixed
        /// deadline.
        package var bodyMinBytesPerSecond: Int
        /// `idle_timeout_ms`: a connection without a request in progress is closed after this long.
        package var idleTimeoutMs: Int
        /// `max_connections`: connections open at once; beyond it the listener accepts no more until one closes.
        package var maxConnections: Int
        /// `readiness_timeout_ms`: how long `/readyz` waits for the store's probe; a store that has not answered by
        /// then makes it 503.
        package var readinessTimeoutMs: Int

        /// The smallest ``maxPendingNotifications``: one request's worth (``PushMessage/maxTokens``).
        static let minimumPendingNotifications = 100

        package init(
            listen: Address = Address(host: "0.0.0.0", port: 8080),
            tlsCertFile: String? = nil,
            tlsKeyFile: String? = nil,
            trustedProxies: [String] = [],
            drainSeconds: Int = 20,
            maxPendingNotifications: Int = 20_000,
            headerTimeoutMs: Int = 10_000,
            bodyTimeoutMs: Int = 30_000,
            bodyMinBytesPerSecond: Int = 1_024,
            idleTimeoutMs: Int = 60_000,
            maxConnections: Int = 4_096,
            readinessTimeoutMs: Int = 1_000
        ) {
            self.listen = listen
            self.tlsCertFile = tlsCertFile
            self.tlsKeyFile = tlsKeyFile
            self.trustedProxies = trustedProxies
            self.drainSeconds = drainSeconds
            self.maxPendingNotifications = maxPendingNotifications
            self.headerTimeoutMs = headerTimeoutMs
            self.bodyTimeoutMs = bodyTimeoutMs
            self.bodyMinBytesPerSecond = bodyMinBytesPerSecond
            self.idleTimeoutMs = idleTimeoutMs
            self.maxConnections = maxConnections
            self.readinessTimeoutMs = readinessTimeoutMs
        }

        /// Whether the API is served over HTTPS.
        package var usesTLS: Bool { tlsCertFile != nil && tlsKeyFile != nil }
    }
}

extension RelayConfiguration.Server {
    /// A host and port to listen on, written `host:port` (`[::]:8080` for an IPv6 address).
    package struct Address: Sendable, Equatable, CustomStringConvertible {
        /// A host name, an IPv4 address or an IPv6 address (without brackets).
        package var host: String
        package var port: Int

        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `host:port`, with an IPv6 host in brackets.
        package var description: String {
            host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}
