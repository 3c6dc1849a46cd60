package import Hummingbird
package import RelayApplication
package import RelayStore

/// The context of the `/admin/v1` handlers: the request's origin and the operator its token authenticated.
///
/// Made by the router from a ``RelayRequestContext`` that ``OperatorAuthentication`` has authenticated; each handler
/// then checks the role its route needs (``AdminAPI/administration(_:access:)``), so that an unknown token is 401
/// whatever the route, and a read-only one is 403 only on writes.
package struct AdminRequestContext: ChildRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The request's id and client, for the audit records of the actions and refusals.
    package let origin: RequestOrigin
    /// The operator behind the request's token.
    package let operatorRecord: OperatorRecord

    /// - Throws: 401 when the request was not authenticated, which the route group's middleware makes impossible.
    package init(context: RelayRequestContext) throws {
        guard let operatorRecord = context.operatorRecord else { throw AdminError.unauthorized }
        self.coreContext = context.coreContext
        self.origin = context.origin
        self.operatorRecord = operatorRecord
    }

    /// Bodies are read with the relay's own limit and error (413 PAYLOAD_TOO_LARGE).
    package var maxUploadSize: Int { 1 << 20 }
}
