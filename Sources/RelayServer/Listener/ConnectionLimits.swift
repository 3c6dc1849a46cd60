package import NIOCore
package import RelayApplication

/// How long the listener waits for each part of a request, and how many connections it keeps open: what a client
/// that sends slowly, or not at all, can hold of the relay (`[server] header_timeout_ms`, `body_timeout_ms`,
/// `body_min_bytes_per_second`, `idle_timeout_ms`, `max_connections`).
package struct ConnectionLimits: Sendable, Equatable {
    /// A new connection (TLS handshake included) has this long to deliver its first request's headers; on HTTP/1.1
    /// every later request's headers must arrive this long after its first byte, and on HTTP/2 every header block
    /// this long after its first frame (``HTTP2HeaderBlockTimeoutHandler``).
    package var headerTimeout: TimeAmount
    /// A request's body must have arrived whole this long after its headers, unless it keeps arriving at
    /// ``bodyMinimumBytesPerSecond``; then the request (an HTTP/2 stream) or the connection (HTTP/1.1) is closed.
    package var bodyTimeout: TimeAmount
    /// A body still arriving at its ``bodyTimeout`` is given another `bodyTimeout` each time it arrived at least this
    /// fast over the period just ended (so that a large body sent steadily is not cut at a fixed deadline, while a
    /// trickle is); 0 makes `bodyTimeout` a fixed deadline.
    package var bodyMinimumBytesPerSecond: Int
    /// A connection without a request in progress (HTTP/1.1 keep-alive, HTTP/2 without open streams) is closed after
    /// this long; until the next request's first byte, on HTTP/1.1.
    package var idleTimeout: TimeAmount
    /// Connections open at once; a connection beyond it is refused at once (``AdmittingChannel``,
    /// ``ConnectionRefusalHandler``).
    package var maxConnections: Int

    package init(
        headerTimeout: TimeAmount = .seconds(10),
        bodyTimeout: TimeAmount = .seconds(30),
        bodyMinimumBytesPerSecond: Int = 1_024,
        idleTimeout: TimeAmount = .seconds(60),
        maxConnections: Int = 4_096
    ) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.bodyMinimumBytesPerSecond = bodyMinimumBytesPerSecond
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
    }
}

extension ConnectionLimits {
    /// The limits `[server]` sets.
    package init(_ server: RelayConfiguration.Server) {
        self.init(
            headerTimeout: .milliseconds(Int64(server.headerTimeoutMs)),
            bodyTimeout: .milliseconds(Int64(server.bodyTimeoutMs)),
            bodyMinimumBytesPerSecond: server.bodyMinBytesPerSecond,
            idleTimeout: .milliseconds(Int64(server.idleTimeoutMs)),
            maxConnections: server.maxConnections
        )
    }
}
