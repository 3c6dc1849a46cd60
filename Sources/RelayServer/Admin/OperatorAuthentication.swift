import Hummingbird
import RelayApplication
import RelayStore

/// Authenticates the operator token of an `/admin/v1` request (`Authorization: Bearer pro_…`) before its handler
/// runs; anything else, a tenant key included, is 401 without saying why.
///
/// The handler gets the operator in its ``AdminRequestContext`` and checks the role its route needs. A refusal
/// after this point leaves attributed to the operator (`operator:NAME`), so that its audit record names the actor.
struct OperatorAuthentication: RouterMiddleware {
    typealias Context = RelayRequestContext
    let store: any PushStore

    func handle(
        _ request: Request,
        context: RelayRequestContext,
        next: (Request, RelayRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let presented = bearerKey(request), let (id, secret) = OperatorTokens.parse(presented) else {
            throw AdminError.unauthorized
        }
        let found: OperatorRecord?
        do {
            found = try await store.operatorRecord(id: id)
        } catch {
            throw AdminError.storeUnavailable
        }
        guard let record = found, record.isActive, TenantKeys.matches(secret: secret, hash: record.secretHash) else {
            throw AdminError.unauthorized
        }
        var context = context
        context.operatorRecord = record
        return try await RefusalSubject(actor: AdminAPI.actor(record)).attributing { try await next(request, context) }
    }
}
