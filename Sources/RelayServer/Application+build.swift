package import Hummingbird
import HummingbirdCore
package import Logging
import NIOSSL
package import RelayApplication
import RelayCore
import RelayProviders
import RelayStore
package import ServiceLifecycle

/// What the relay application is made of; the executable builds it from relay.conf, tests from their own parts.
package struct RelayApplicationParts: Sendable {
    package var relay: Relay
    package var host: String
    package var port: Int
    /// PEM certificate chain and key for TLS on the listener (HTTP/2 by ALPN); plain HTTP/1.1 when `nil`.
    package var tls: (certificateChain: String, privateKey: String)?
    /// Limits and timeouts of HTTP/2 connections on the TLS listener.
    package var http2: RelayHTTP2Settings
    /// Timeouts of every connection (plain and TLS, HTTP/1.1 and HTTP/2), and how many may be open at once.
    package var connections: ConnectionLimits
    /// Renders the Prometheus exposition for `GET /metrics`.
    package var metrics: (@Sendable () async -> String)?
    /// Services that run with the application, in start order (upstream clients first, so that they close last).
    package var services: [any Service]
    package var logger: Logger
    /// Called once the listener is bound, with its port (useful with port 0).
    package var onServerRunning: @Sendable (Int?) async -> Void
    /// A service told first of a graceful shutdown, just after the listener (it is listed last): `serve` logs there.
    package var shutdownAnnouncer: (any Service)?
    /// The listener's certificates when the caller reloads them (`serve` on SIGHUP); else made from ``tls``.
    package var certificates: TLSCertificates?

    package init(
        relay: Relay,
        host: String = "127.0.0.1",
        port: Int = 8080,
        tls: (certificateChain: String, privateKey: String)? = nil,
        http2: RelayHTTP2Settings = RelayHTTP2Settings(),
        connections: ConnectionLimits = ConnectionLimits(),
        metrics: (@Sendable () async -> String)? = nil,
        services: [any Service] = [],
        // Silent unless given: `serve` and `demo` pass theirs, and tests that build an application without one would
        // otherwise print an access line per request (at `info`) to the test output.
        logger: Logger = Logger(label: "pushrelay", factory: { _ in SwiftLogNoOpLogHandler() }),
        onServerRunning: @escaping @Sendable (Int?) async -> Void = { _ in },
        shutdownAnnouncer: (any Service)? = nil,
        certificates: TLSCertificates? = nil
    ) {
        self.relay = relay
        self.host = host
        self.port = port
        self.tls = tls
        self.http2 = http2
        self.connections = connections
        self.metrics = metrics
        self.services = services
        self.logger = logger
        self.onServerRunning = onServerRunning
        self.shutdownAnnouncer = shutdownAnnouncer
        self.certificates = certificates
    }
}

/// Builds the relay's router: every route, behind the responder that adds request ids, logs and JSON errors.
///
/// The tenant routes form one group whose middleware authenticates the tenant key and whose handlers get a
/// ``TenantRequestContext``; `/admin/v1` is another, with the operator token and ``AdminRequestContext``; health and
/// metrics need neither. ``RefusalAuditMiddleware`` comes first, around every route, to record refused requests.
package func buildRouter(_ parts: RelayApplicationParts) -> RelayResponderBuilder {
    let router = Router(context: RelayRequestContext.self)
    router.add(middleware: RefusalAuditMiddleware(relay: parts.relay))
    let tenantRoutes = router.group()
        .add(middleware: TenantAuthentication(relay: parts.relay))
        .group(context: TenantRequestContext.self)
    NativeAPI(relay: parts.relay).addRoutes(to: tenantRoutes)
    WhoamiAPI(relay: parts.relay).addRoutes(to: tenantRoutes)
    ExpoAPI(relay: parts.relay).addRoutes(to: tenantRoutes)
    OneUptimeAPI(relay: parts.relay).addRoutes(to: tenantRoutes)
    HealthAPI(relay: parts.relay, metrics: parts.metrics).addRoutes(to: router)
    AdminAPI(relay: parts.relay).addRoutes(to: router)
    return RelayResponderBuilder(router: router, relay: parts.relay)
}

package struct RelayResponderBuilder: HTTPResponderBuilder {
    let router: Router<RelayRequestContext>
    let relay: Relay

    package func buildResponder() -> RelayResponder<Router<RelayRequestContext>.Responder> {
        RelayResponder(base: router.buildResponder(), relay: relay)
    }
}

/// Builds the whole application: router, listener (TLS and HTTP/2 when configured) and services. On SIGTERM the
/// listener stops accepting and finishes its requests, then the delivery queue drains, then the caller's services stop
/// in reverse order.
package func buildApplication(_ parts: RelayApplicationParts) throws -> some ApplicationProtocol {
    let server: HTTPServerBuilder
    let limits = parts.connections
    let connections = OpenConnections(limit: limits.maxConnections)
    if let tls = parts.tls {
        let certificates =
            try parts.certificates
            ?? TLSCertificates(certificateChain: tls.certificateChain, privateKey: tls.privateKey)
        let settings = parts.http2
        server = HTTPServerBuilder { responder in
            AdmittingChannel(
                base: RelayTLSChannel(
                    responder: responder, certificates: certificates, settings: settings, limits: limits),
                connections: connections, refusal: .close)
        }
    } else {
        server = HTTPServerBuilder { responder in
            AdmittingChannel(
                base: HTTP1Channel(responder: responder, configuration: RelayTLSChannel.http1Configuration(limits)),
                connections: connections, refusal: .httpServiceUnavailable)
        }
    }
    return Application(
        router: buildRouter(parts),
        server: server,
        configuration: .init(
            address: .hostname(parts.host, port: parts.port),
            serverName: nil,
            availableConnectionsDelegate: connections.acceptor
        ),
        // Start order; shutdown runs in reverse after the listener stops: the delivery queue drains first, then the
        // other services, and the upstream clients (listed first by the caller) close last.
        // The commit queue stops after the delivery queue, so the last outcomes are committed.
        // The last tallies of refusals without a key are written after the delivery queue has drained and before the
        // commit queue stops.
        services: parts.services + [
            parts.relay.commits, AnonymousRefusalsService(relay: parts.relay), parts.relay.queue,
        ] + (parts.shutdownAnnouncer.map { [$0] } ?? []),
        onServerRunning: { channel in await parts.onServerRunning(channel.localAddress?.port) },
        logger: parts.logger
    )
}
