package import Hummingbird
import Logging
import NIOCore
package import RelayApplication
package import RelayStore

/// The request context of every relay route, before any authentication.
///
/// ### Overview
/// Statically typed, as Hummingbird 2 intends: ``RelayResponder`` sets the request's ``origin`` (its id and client)
/// and the key in the path before routing; an authenticated route group's middleware sets ``identity`` (tenant
/// routes, ``TenantAuthentication``) or ``operatorRecord`` (`/admin/v1`, ``OperatorAuthentication``), and the
/// group's handlers get a child context that carries it without an optional: ``TenantRequestContext``,
/// ``AdminRequestContext``. Nothing is written into a context after its handler has it; what the audit record of a
/// refused request needs to know about its caller travels with the error (``AttributedRefusal``).
package struct RelayRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The address of the connection's peer (a client, or a proxy in front of the relay).
    package let peerAddress: String?
    /// The request's id and client, set by ``RelayResponder`` before routing.
    package var origin = RequestOrigin()
    /// The tenant key carried in the path (`/t/<key>/…`), which ``RelayResponder`` took out before routing.
    package var pathKey: String?
    /// The tenant the request's key authenticated, set by ``TenantAuthentication`` on the tenant routes.
    package var identity: TenantIdentity?
    /// The operator whose token authenticated the request, set by ``OperatorAuthentication`` on `/admin/v1`.
    package var operatorRecord: OperatorRecord?
    /// The tenant and key authentication found, for the responder's access line (a reference: see its comment).
    package let attribution = RequestAttribution()

    package init(source: Source) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Bodies are read with the relay's own limit and error (413 PAYLOAD_TOO_LARGE).
    package var maxUploadSize: Int { 1 << 20 }
}
