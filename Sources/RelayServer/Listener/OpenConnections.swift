import HummingbirdCore
import Metrics

/// The listener's cap on open connections (`[server] max_connections`), for Hummingbird's
/// `AvailableConnectionsChannelHandler`: at the cap the listener stops accepting until a connection closes, so that
/// further clients wait in the kernel's backlog (refused by the kernel once it is full) and cost the relay neither a
/// descriptor nor a TLS handshake. Hummingbird's own `MaximumAvailableConnections` does the same without saying how
/// many are open; this publishes the count as `relay_http_connections_open`.
struct OpenConnections: AvailableConnectionsDelegate {
    static let gaugeLabel = "relay_http_connections_open"

    let limit: Int
    private(set) var open = 0

    init(limit: Int) {
        self.limit = limit
    }

    mutating func connectionOpened() {
        self.open += 1
        Gauge(label: Self.gaugeLabel).record(self.open)
    }

    mutating func connectionClosed() {
        self.open -= 1
        Gauge(label: Self.gaugeLabel).record(self.open)
    }

    func isAcceptingNewConnections() -> Bool {
        self.open < self.limit
    }
}
