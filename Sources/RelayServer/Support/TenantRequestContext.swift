package import Hummingbird
package import RelayApplication

/// The context of the tenant routes' handlers (native, Expo-compatible, OneUptime-compatible): the request's origin
/// and the tenant its key authenticated.
///
/// Made by the router from a ``RelayRequestContext`` that ``TenantAuthentication`` has authenticated, so a handler
/// cannot run without an identity and never looks the key up again.
package struct TenantRequestContext: ChildRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The request's id and client, for the audit records of its notifications and refusals.
    package let origin: RequestOrigin
    /// The tenant behind the request's key, and the key's id.
    package let identity: TenantIdentity

    /// - Throws: 401 when the request was not authenticated, which the route group's middleware makes impossible.
    package init(context: RelayRequestContext) throws {
        guard let identity = context.identity else { throw RelayHTTPError.unauthorized }
        self.coreContext = context.coreContext
        self.origin = context.origin
        self.identity = identity
    }

    /// Bodies are read with the relay's own limit and error (413 PAYLOAD_TOO_LARGE).
    package var maxUploadSize: Int { 1 << 20 }
}
