import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RelayApplication
import RelayCore
import RelayStore

/// `/admin/v1`: tenants, their keys, usage and the audit log, for the relay's operators (JSON).
///
/// ### Overview
/// Every route needs an operator token (`Authorization: Bearer pro_…`); anything else, a tenant key included, is 401
/// without saying why. Role `auditor` may only read (tenants, keys without secrets, usage, the audit log); any write
/// by an auditor is 403 `FORBIDDEN`. `{id}` in a path is a tenant's id or name.
///
/// ### Implementation
/// - Checks run in this order: the token (401), the role (403), the tenant and key in the path (404), the body or
///   query (415, 413, 400), then the state (409).
/// - The token is checked by the route group's ``OperatorAuthentication``, so every handler gets an
///   ``AdminRequestContext`` with the operator, and a refused request (400, 403) is recorded with its actor; once a
///   handler has found the tenant or key in the path, its refusals name them too (``withPathTenant(_:context:_:)``).
/// - Tenants, keys and usage are ``TenantAdministration``'s, shared with the command line: the rules, the JSON
///   (``AdminJSON``) and the `admin` audit records (two for a rotation: `key.rotate` and `key.issue`) are its. A
///   failure between a stored change and its record is a 503 that says the change was stored.
/// - Tenants and keys are read from the store on every request, not from the tenant authenticator's cache; the
///   authenticators of all instances see a change within ``Authenticator/cacheLifetime``.
struct AdminAPI: Sendable {
    let relay: Relay
    /// The time of admin actions (key creation, expiry and revocation, audit record times).
    let now: @Sendable () -> Date

    init(relay: Relay, now: @escaping @Sendable () -> Date = Date.init) {
        self.relay = relay
        self.now = now
    }

    func addRoutes(to router: Router<RelayRequestContext>) {
        let admin = router.group("/admin/v1")
            .add(middleware: OperatorAuthentication(relay: relay))
            .group(context: AdminRequestContext.self)
        admin.get("tenants") { request, context in try await listTenants(request, context: context) }
        admin.post("tenants") { request, context in try await createTenant(request, context: context) }
        admin.get("tenants/:id") { request, context in try await showTenant(request, context: context) }
        admin.patch("tenants/:id") { request, context in try await updateTenant(request, context: context) }
        admin.delete("tenants/:id") { request, context in try await deleteTenant(request, context: context) }
        admin.post("tenants/:id/disable") { request, context in
            try await setDisabled(true, request, context: context)
        }
        admin.post("tenants/:id/enable") { request, context in
            try await setDisabled(false, request, context: context)
        }
        admin.get("tenants/:id/keys") { request, context in try await listKeys(request, context: context) }
        admin.post("tenants/:id/keys") { request, context in try await issueKey(request, context: context) }
        admin.post("tenants/:id/keys/:keyID/rotate") { request, context in
            try await rotateKey(request, context: context)
        }
        admin.delete("tenants/:id/keys/:keyID") { request, context in try await revokeKey(request, context: context) }
        admin.get("tenants/:id/usage") { request, context in try await usage(request, context: context) }
        admin.get("audit") { request, context in try await audit(request, context: context) }
        admin.get("keys/:keyID") { request, context in try await findKey(request, context: context) }
        admin.get("operators") { request, context in try await listOperators(request, context: context) }
        admin.post("operators") { request, context in try await createOperator(request, context: context) }
        admin.delete("operators/:name") { request, context in try await revokeOperator(request, context: context) }
    }

    // MARK: - Shared steps

    /// What a route needs of the caller's role.
    enum Access {
        case read
        case write
    }

    /// Tenant administration on behalf of the request's operator, if its role allows `access`; its audit records
    /// carry the request's id and client.
    ///
    /// - Throws: 403 ``AdminError/forbidden`` for a write by a read-only role.
    func administration(_ context: AdminRequestContext, access: Access) throws(RelayHTTPError) -> TenantAdministration {
        guard access == .read || context.operatorRecord.role.canWrite else { throw AdminError.forbidden }
        let sink = AuditSink(
            commits: relay.commits, actor: Self.actor(context.operatorRecord), origin: context.origin,
            logger: context.logger
        )
        return TenantAdministration(
            store: relay.store, audit: sink, tenantDefaults: relay.settings.tenantDefaults,
            configuredApps: relay.settings.apps, now: now)
    }

    /// How the audit log names an operator.
    static func actor(_ record: OperatorRecord) -> String { "operator:\(record.name)" }

    /// Runs administration actions; a failure becomes the API's error (``AdminError/failure(_:)``).
    func administering<T>(_ body: () async throws -> T) async throws(RelayHTTPError) -> T {
        do {
            return try await body()
        } catch let failure as TenantAdministration.Failure {
            throw AdminError.failure(failure)
        } catch let error as RelayHTTPError {
            throw error
        } catch {
            throw AdminError.storeUnavailable
        }
    }

    /// The tenant named by the path's `{id}` (its id, or else its name); deleted tenants included.
    func pathTenant(_ administration: TenantAdministration, context: AdminRequestContext) async throws(RelayHTTPError)
        -> Tenant
    {
        let reference = Self.pathParameter("id", context)
        return try await administering { try await administration.tenant(reference) }
    }

    /// Runs the rest of a route on the tenant named by the path's `{id}` (``pathTenant(_:context:)``): a refusal from
    /// `body` (a bad body or query, say) is recorded with that tenant.
    func withPathTenant<T>(
        _ administration: TenantAdministration,
        context: AdminRequestContext,
        _ body: (Tenant) async throws -> T
    ) async throws -> T {
        let tenant = try await pathTenant(administration, context: context)
        return try await RefusalSubject(tenantID: tenant.id).attributing { try await body(tenant) }
    }

    /// A path parameter, percent-decoded (the router leaves paths as sent).
    static func pathParameter(_ name: String, _ context: AdminRequestContext) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    /// Runs a store call; any failure is 503 `STORE_UNAVAILABLE`.
    func storeCall<T>(_ body: () async throws -> T) async throws(RelayHTTPError) -> T {
        do {
            return try await body()
        } catch {
            throw AdminError.storeUnavailable
        }
    }

    /// The API's audit log of tenant administration: the relay's group commit, each record with the request's id and
    /// client.
    struct AuditSink: AdminAuditSink {
        let commits: CommitQueue
        let actor: String
        let origin: RequestOrigin
        let logger: Logger

        func commit(_ entries: [AuditEntry]) async throws {
            let entries = entries.map { entry in
                var entry = entry
                entry.requestID = origin.requestID
                entry.client = origin.client
                return entry
            }
            do {
                try await commits.submit(StoreBatch(), audit: entries)
            } catch {
                logger.error("Audit record of an admin action not stored", metadata: ["error": "\(error)"])
                throw error
            }
        }
    }

    /// A body that may be empty (`nil`); otherwise read and checked as every JSON body.
    func optionalJSONBody(_ request: Request) async throws(RelayHTTPError) -> JSONValue? {
        var request = request
        let limit = relay.settings.maxBodyBytes
        do {
            // Collecting keeps the bytes in the request, so `readJSONBody` reads them again.
            guard try await request.collectBody(upTo: limit).readableBytes > 0 else { return nil }
        } catch {
            throw .payloadTooLarge(limit: limit)
        }
        return try await readJSONBody(request, limit: limit)
    }
}
