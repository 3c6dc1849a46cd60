import HummingbirdCore
import Metrics
import Synchronization

/// The listener's cap on open connections (`[server] max_connections`), shared by every connection's setup
/// (``AdmittingChannel``): a connection accepted while `limit` are open is refused (``ConnectionRefusalHandler``)
/// rather than served, and is not counted. Publishes the count of served connections as `relay_http_connections_open`
/// and the refusals as `relay_http_connections_refused_total`.
///
/// Refusing needs the listener to keep accepting at the cap, so Hummingbird's `AvailableConnectionsDelegate` (which
/// stops accepting) is left with a higher ceiling, ``Acceptor``: a flood faster than refusals close holds at most
/// ``refusalHeadroom`` descriptors beyond the cap, and the clients beyond that wait in the kernel's backlog as before.
final class OpenConnections: Sendable {
    static let gaugeLabel = "relay_http_connections_open"
    static let refusalsCounterLabel = "relay_http_connections_refused_total"
    /// Connections being refused at once (each for a moment: see ``ConnectionRefusalHandler``) beyond which the
    /// listener stops accepting.
    static let refusalHeadroom = 128

    let limit: Int
    private let open = Mutex(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts the new connection as open and returns `true` when fewer than `limit` are; else counts a refusal.
    func admit() -> Bool {
        let admitted: Int? = self.open.withLock { open in
            guard open < self.limit else { return nil }
            open += 1
            return open
        }
        guard let admitted else {
            Counter(label: Self.refusalsCounterLabel).increment()
            return false
        }
        Gauge(label: Self.gaugeLabel).record(admitted)
        return true
    }

    /// An admitted connection closed.
    func closed() {
        let open = self.open.withLock { open in
            open -= 1
            return open
        }
        Gauge(label: Self.gaugeLabel).record(open)
    }

    var count: Int { self.open.withLock { $0 } }

    /// The ceiling for Hummingbird's `AvailableConnectionsChannelHandler`: every accepted socket counts, served or
    /// being refused, and at `limit` + ``refusalHeadroom`` the listener stops accepting until one closes.
    var acceptor: Acceptor { Acceptor(ceiling: self.limit + Self.refusalHeadroom) }

    struct Acceptor: AvailableConnectionsDelegate {
        let ceiling: Int
        private(set) var accepted = 0

        init(ceiling: Int) {
            self.ceiling = ceiling
        }

        mutating func connectionOpened() { self.accepted += 1 }
        mutating func connectionClosed() { self.accepted -= 1 }
        func isAcceptingNewConnections() -> Bool { self.accepted < self.ceiling }
    }
}
