import Hummingbird
import RelayApplication
import RelayStore

/// Authenticates the operator token of an `/admin/v1` request (`Authorization: Bearer pro_…`) before its handler
/// runs; anything else, a tenant key included, is 401 without saying why.
///
/// The token is checked first, whatever the caller's address did: a valid token is served even from an address that
/// has presented many bad keys or tokens. Only a request without a valid token is judged by its address, as on the
/// tenant routes (``TenantAuthentication``, with which it shares the count): each 401 counts one failure, and an
/// address with too many of late gets 429 `TOO_MANY_AUTHENTICATION_FAILURES` in place of the 401. A missing or
/// malformed token is refused before the store is asked; a well-formed one costs one lookup by id, whatever the
/// address, so that a token is never locked out by others' failures.
///
/// The handler gets the operator in its ``AdminRequestContext`` and checks the role its route needs. A refusal
/// after this point leaves attributed to the operator (`operator:NAME`), so that its audit record names the actor.
struct OperatorAuthentication: RouterMiddleware {
    typealias Context = RelayRequestContext
    let relay: Relay

    /// What an unknown operator id's secret is compared with, so that it costs what a wrong secret does.
    private static let dummyHash = TenantKeys.hash(secret: "")

    func handle(
        _ request: Request,
        context: RelayRequestContext,
        next: (Request, RelayRequestContext) async throws -> Response
    ) async throws -> Response {
        let client = context.origin.client
        guard let presented = bearerKey(request), let (id, secret) = OperatorTokens.parse(presented) else {
            throw relay.authenticationFailed(client: client) ?? AdminError.unauthorized
        }
        let found: OperatorRecord?
        do {
            found = try await relay.store.operatorRecord(id: id)
        } catch {
            throw AdminError.storeUnavailable
        }
        let matches = TenantKeys.matches(secret: secret, hash: found?.secretHash ?? Self.dummyHash)
        guard matches, let record = found, record.isActive else {
            throw relay.authenticationFailed(client: client) ?? AdminError.unauthorized
        }
        var context = context
        context.operatorRecord = record
        return try await RefusalSubject(actor: AdminAPI.actor(record)).attributing { try await next(request, context) }
    }
}
