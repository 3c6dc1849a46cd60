/// How a pool connects and how much it carries.
///
/// The defaults follow Apple's advice and work around libcurl 7.88.1's quiet defaults (see PROTOCOLS.md §5): a
/// host connection limit is always set, idle connections live for most of an hour instead of 118 seconds, and the
/// client-side stream cap is raised from 100 where the upstream allows more.
package struct HTTP2PoolConfiguration: Sendable, Equatable {
    /// Connections per origin (`CURLMOPT_MAX_HOST_CONNECTIONS`). Always set: without it libcurl 7.88.1 over-connects.
    package var maxConnections: Int
    /// Streams per connection (`CURLMOPT_MAX_CONCURRENT_STREAMS`); the server's own limit applies on top.
    package var maxConcurrentStreams: Int
    /// Requests waiting for a stream beyond `maxConnections × maxConcurrentStreams`; more are refused as overloaded.
    package var maxQueued: Int
    package var connectTimeout: Duration
    /// The default deadline of a request, queueing included.
    package var requestTimeout: Duration
    /// Idle connections older than this are closed (`CURLOPT_MAXAGE_CONN`).
    package var maxIdleAge: Duration
    /// Connections older than this take no new requests (`CURLOPT_MAXLIFETIME_CONN`): fresh DNS, rebalancing.
    package var maxLifetime: Duration
    /// How long DNS answers are kept (`CURLOPT_DNS_CACHE_TIMEOUT`); Apple advises a fresh lookup per connection.
    package var dnsCacheTimeout: Duration
    /// Extra PEM certificates trusted for upstream TLS (`CURLOPT_CAINFO`); the system bundle when `nil`.
    package var caFile: String?
    /// Responses above this size fail as `responseTooLarge`.
    package var maxResponseBytes: Int

    package init(
        maxConnections: Int = 2,
        maxConcurrentStreams: Int = 100,
        maxQueued: Int = 10_000,
        connectTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(30),
        maxIdleAge: Duration = .seconds(3300),
        maxLifetime: Duration = .seconds(4 * 3600),
        dnsCacheTimeout: Duration = .seconds(30),
        caFile: String? = nil,
        maxResponseBytes: Int = 1 << 20
    ) {
        self.maxConnections = maxConnections
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxQueued = maxQueued
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxIdleAge = maxIdleAge
        self.maxLifetime = maxLifetime
        self.dnsCacheTimeout = dnsCacheTimeout
        self.caFile = caFile
        self.maxResponseBytes = maxResponseBytes
    }

    /// The most requests handed to libcurl at once: every connection's every stream.
    package var maxInFlight: Int { max(1, maxConnections) * max(1, maxConcurrentStreams) }
}
