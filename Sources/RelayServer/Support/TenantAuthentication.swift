import Foundation
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

/// Authenticates the tenant key of a tenant route before its handler runs: the key in the path (`/t/<key>/…`, taken
/// out by ``RelayResponder``) or else the `Authorization: Bearer` one.
///
/// An address with too many failed authentications gets 429 `TOO_MANY_AUTHENTICATION_FAILURES` before its key is
/// looked at (``AuthenticationFailures``); each 401 counts one failure.
///
/// The handler gets the identity in its ``TenantRequestContext`` (the route group's child context). A refusal,
/// the key's own (401, 403) or the handler's, leaves attributed to what is known of the caller: the key id presented
/// and, once the key is proved good, its tenant (``AttributedRefusal``), never the key.
struct TenantAuthentication: RouterMiddleware {
    typealias Context = RelayRequestContext
    let relay: Relay

    func handle(
        _ request: Request,
        context: RelayRequestContext,
        next: (Request, RelayRequestContext) async throws -> Response
    ) async throws -> Response {
        let client = context.origin.client
        try relay.checkAuthenticationFailures(client: client)
        let identity: TenantIdentity
        do {
            identity = try await relay.authenticator.authenticate(tenantKey(request, context))
        } catch {
            if error.reason == .unauthorized { relay.authenticationFailed(client: client) }
            throw AttributedRefusal(RelayHTTPError(error), subject: RefusalSubject(error))
        }
        var context = context
        context.identity = identity
        context.attribution.set(tenantID: identity.tenant.id, keyID: identity.keyID)
        return try await RefusalSubject(identity).attributing { try await next(request, context) }
    }
}

extension Relay {
    /// Throws 429 when the client's address has failed to authenticate too often of late.
    func checkAuthenticationFailures(client: String?) throws(RelayHTTPError) {
        let now = clock.date.timeIntervalSince1970
        if let retryAfter = authenticationFailures.retryAfter(client: client, now: now) {
            throw .authenticationFailures(retryAfter: retryAfter)
        }
    }

    /// Counts a failed authentication (a 401) from the client's address.
    func authenticationFailed(client: String?) {
        authenticationFailures.failed(client: client, now: clock.date.timeIntervalSince1970)
    }
}
