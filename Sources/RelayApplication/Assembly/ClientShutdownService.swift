import RelayHTTP2
import ServiceLifecycle

/// Closes the upstream connections after everything else has stopped (services shut down in reverse order, and
/// ``RelayAssembly`` lists this one first).
struct ClientShutdownService: Service, CustomStringConvertible {
    var description: String { "ClientShutdownService" }

    let clients: [HTTP2Client]

    func run() async throws {
        try? await gracefulShutdown()
        for client in clients { await client.shutdown(gracePeriod: .seconds(10)) }
    }
}
