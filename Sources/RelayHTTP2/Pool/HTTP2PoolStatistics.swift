/// A pool's counters, for metrics and benchmarks.
package struct HTTP2PoolStatistics: Sendable, Equatable {
    /// TCP connections open now.
    package var connectionsOpen = 0
    /// Connections opened since the pool started.
    package var connectionsOpened = 0
    /// Requests inside libcurl now.
    package var streamsInFlight = 0
    /// Requests waiting for a stream now.
    package var queued = 0
    /// Requests answered with a response (any status).
    package var completed = 0
    /// Requests that ended without a response, by kind.
    package var failed: [HTTP2Error.Kind: Int] = [:]

    package init() {}

    /// Failed requests of every kind.
    package var failedTotal: Int { failed.values.reduce(0, +) }
}
