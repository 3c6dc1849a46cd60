package import Hummingbird
import Logging
import NIOCore
package import RelayApplication

/// The request context of every relay route.
package struct RelayRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The address of the connection's peer (a client, or a proxy in front of the relay).
    package let peerAddress: String?
    /// What the audit log learns about this request as it goes (shared by every copy of the context).
    package let trail = RequestTrail()
    /// The tenant key carried in the path (`/t/<key>/…`), which ``RelayResponder`` took out before routing.
    package var pathKey: String?

    package init(source: Source) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Bodies are read with the relay's own limit and error (413 PAYLOAD_TOO_LARGE).
    package var maxUploadSize: Int { 1 << 20 }
}
