import Foundation
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

/// Authenticates the tenant key of a tenant route before its handler runs: the key in the path (`/t/<key>/…`, taken
/// out by ``RelayResponder``) or else the `Authorization: Bearer` one.
///
/// The key is checked first, whatever the caller's address did: a valid key is served even from an address that has
/// presented many bad ones (installs share addresses). Only a request without a valid key is judged by its address
/// (``AuthenticationFailures``): each 401 counts one failure, and an address with too many of late gets 429
/// `TOO_MANY_AUTHENTICATION_FAILURES` in place of the 401.
///
/// Checking first costs a penalised address's request what any bad key costs: nothing from the store for a missing
/// or malformed key, or a key id cached either way (known keys, and up to ``Authenticator/maximumUnknownKeys``
/// unknown ones, for 5 s); one key lookup by id otherwise, never a tenant read. Skipping that lookup for key ids not
/// cached would lock out a valid key whose record has simply not been read in the last 5 s, which is what this
/// order is for; so the store's work stays one indexed read per request, and the relay's memory bounded by the two
/// tables.
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
        let identity: TenantIdentity
        do {
            identity = try await relay.authenticator.authenticate(tenantKey(request, context))
        } catch {
            var refusal = RelayHTTPError(error)
            if error.reason == .unauthorized, let limited = relay.authenticationFailed(client: context.origin.client) {
                refusal = limited
            }
            throw AttributedRefusal(refusal, subject: RefusalSubject(error))
        }
        var context = context
        context.identity = identity
        context.attribution.set(tenantID: identity.tenant.id, keyID: identity.keyID)
        return try await RefusalSubject(identity).attributing { try await next(request, context) }
    }
}

extension Relay {
    /// Counts a request without a valid key (a 401) from the client's address.
    ///
    /// - Returns: `nil` when counted, so the request gets its 401; or 429 `TOO_MANY_AUTHENTICATION_FAILURES`, its
    ///   answer instead, when the address has failed too often of late.
    func authenticationFailed(client: String?) -> RelayHTTPError? {
        authenticationFailures.failed(client: client, now: clock.date.timeIntervalSince1970).map {
            .authenticationFailures(retryAfter: $0)
        }
    }
}
