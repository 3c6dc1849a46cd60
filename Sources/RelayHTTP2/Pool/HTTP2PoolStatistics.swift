/// A pool's counters, for metrics and benchmarks.
package struct HTTP2PoolStatistics: Sendable, Equatable {
    /// Connections open now (TCP sockets).
    package var connectionsOpen = 0
    /// Connections opened since the pool started.
    package var connectionsOpened = 0
    /// Requests on a stream now.
    package var streamsInFlight = 0
    /// Requests waiting for a stream now.
    package var queued = 0
    /// Requests answered with a response (any status).
    package var completed = 0
    /// Requests that ended without a response, by kind.
    package var failed: [HTTP2Error.Kind: Int] = [:]
    /// Streams the server did not process (REFUSED_STREAM, above a GOAWAY's last stream id) and that were sent
    /// again, not counting as an attempt (nghttp2 backend).
    package var streamsResent = 0
    /// GOAWAY frames received (nghttp2 backend).
    package var goAwaysReceived = 0
    /// RST_STREAM frames sent: one per cancelled or timed-out stream, never for a stream that completed (nghttp2
    /// backend).
    package var resetsSent = 0
    /// PINGs sent, and connections closed because a PING went unanswered (nghttp2 backend).
    package var pingsSent = 0
    package var pingTimeouts = 0

    package init() {}

    /// Failed requests of every kind.
    package var failedTotal: Int { failed.values.reduce(0, +) }
}
