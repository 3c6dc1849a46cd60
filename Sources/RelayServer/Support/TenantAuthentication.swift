import Hummingbird
import RelayApplication
import RelayStore

/// Authenticates the tenant key of a tenant route before its handler runs: the key in the path (`/t/<key>/…`, taken
/// out by ``RelayResponder``) or else the `Authorization: Bearer` one.
///
/// The handler gets the identity in its ``TenantRequestContext`` (the route group's child context). A refusal,
/// the key's own (401, 403) or the handler's, leaves attributed to what is known of the caller: the key id presented
/// and, once the key is proved good, its tenant (``AttributedRefusal``), never the key.
struct TenantAuthentication: RouterMiddleware {
    typealias Context = RelayRequestContext
    let authenticator: Authenticator

    func handle(
        _ request: Request,
        context: RelayRequestContext,
        next: (Request, RelayRequestContext) async throws -> Response
    ) async throws -> Response {
        let identity: TenantIdentity
        do {
            identity = try await authenticator.authenticate(tenantKey(request, context))
        } catch {
            throw AttributedRefusal(RelayHTTPError(error), subject: RefusalSubject(error))
        }
        var context = context
        context.identity = identity
        context.attribution.set(tenantID: identity.tenant.id, keyID: identity.keyID)
        return try await RefusalSubject(identity).attributing { try await next(request, context) }
    }
}
