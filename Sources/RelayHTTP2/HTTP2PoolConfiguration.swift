/// Which implementation carries a pool's requests.
package enum HTTP2Backend: String, Sendable, Hashable, CaseIterable {
    /// nghttp2 client sessions over OpenSSL on the client's event-loop threads: batched I/O, exact stream outcomes,
    /// PING, GOAWAY and stream limits handled by the pool's state machine. The default.
    case nghttp2
    /// libcurl's multi interface on a thread of the pool's own: the backend for proxies (CONNECT tunnels).
    case curl
}

/// How a pool connects and how much it carries.
///
/// The defaults follow Apple's advice (long-lived connections, PING on idle ones, a fresh look-up per connection)
/// and PROTOCOLS.md §5 and §7: a connection limit is always set, a connection carries no more streams than the server
/// currently allows nor more than `maxConcurrentStreams`, and idle connections live for most of an hour.
package struct HTTP2PoolConfiguration: Sendable, Equatable {
    /// The implementation that carries the requests. A configured ``proxy`` needs ``HTTP2Backend/curl``.
    package var backend: HTTP2Backend
    /// An `http://[user:password@]host:port` proxy that requests reach the upstream through (HTTP CONNECT tunnels);
    /// `nil` for a direct connection. Only this setting names a proxy: libcurl's reading of `https_proxy` and
    /// friends from the environment is switched off.
    package var proxy: String?
    /// Connections per origin. Always set: without it libcurl 7.88.1 over-connects.
    package var maxConnections: Int
    /// Streams per connection; the server's current `SETTINGS_MAX_CONCURRENT_STREAMS` applies on top.
    package var maxConcurrentStreams: Int
    /// Requests waiting for a stream beyond `maxConnections × maxConcurrentStreams`; more are refused as overloaded.
    package var maxQueued: Int
    /// How long a TCP connect and TLS handshake may take.
    package var connectTimeout: Duration
    /// The default deadline of a request, queueing included.
    package var requestTimeout: Duration
    /// A connection without streams for this long is closed.
    package var maxIdleAge: Duration
    /// A connection older than this takes no new streams and is replaced when needed (fresh DNS, rebalancing); it
    /// closes once its last stream ends.
    package var maxLifetime: Duration
    /// A connection on which nothing has arrived for this long gets a PING (nghttp2 backend; `nil`: never). Keeps
    /// idle connections open through middleboxes and finds a dead or stalled peer.
    package var pingInterval: Duration?
    /// A PING not acknowledged within this closes its connection; its streams fail as outcome unknown.
    package var pingTimeout: Duration
    /// The wait after a failed connect before the next attempt; it doubles with each further failure up to
    /// ``reconnectBackoffLimit``.
    package var reconnectBackoff: Duration
    package var reconnectBackoffLimit: Duration
    /// How long DNS answers are kept; Apple advises a fresh look-up per connection, so keep it short.
    package var dnsCacheTimeout: Duration
    /// Extra PEM certificates trusted for upstream TLS, besides the system store.
    package var caFile: String?
    /// Responses above this size fail as `responseTooLarge`.
    package var maxResponseBytes: Int

    package init(
        backend: HTTP2Backend = .nghttp2,
        proxy: String? = nil,
        maxConnections: Int = 2,
        maxConcurrentStreams: Int = 100,
        maxQueued: Int = 10_000,
        connectTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(30),
        maxIdleAge: Duration = .seconds(3300),
        maxLifetime: Duration = .seconds(4 * 3600),
        pingInterval: Duration? = .seconds(60),
        pingTimeout: Duration = .seconds(10),
        reconnectBackoff: Duration = .milliseconds(100),
        reconnectBackoffLimit: Duration = .seconds(10),
        dnsCacheTimeout: Duration = .seconds(30),
        caFile: String? = nil,
        maxResponseBytes: Int = 1 << 20
    ) {
        self.backend = backend
        self.proxy = proxy
        self.maxConnections = maxConnections
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxQueued = maxQueued
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxIdleAge = maxIdleAge
        self.maxLifetime = maxLifetime
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.reconnectBackoff = reconnectBackoff
        self.reconnectBackoffLimit = reconnectBackoffLimit
        self.dnsCacheTimeout = dnsCacheTimeout
        self.caFile = caFile
        self.maxResponseBytes = maxResponseBytes
    }

    /// The most requests on the wire at once: every connection's every stream.
    package var maxInFlight: Int { max(1, maxConnections) * max(1, maxConcurrentStreams) }
}
