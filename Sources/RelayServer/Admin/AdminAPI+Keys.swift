import Foundation
import Hummingbird
import RelayCore
import RelayStore
package import RelayApplication

extension AdminAPI {
    /// `GET /admin/v1/tenants/{id}/keys`: `{"data": [key…]}`, oldest first; never a secret.
    func listKeys(_ request: Request, context: RelayRequestContext) async throws -> Response {
        _ = try await authorize(request, context: context, access: .read)
        let tenant = try await pathTenant(context)
        let keys = try await storeCall { try await relay.store.keys(tenantID: tenant.id) }
        let date = now()
        return jsonResponse(.object(["data": .array(keys.map { AdminJSON.key($0, at: date) })]))
    }

    /// `POST /admin/v1/tenants/{id}/keys` with an optional `{"expiresInDays": n}`: 201 with the key, shown once.
    func issueKey(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let actor = try await authorize(request, context: context, access: .write)
        let tenant = try await pathTenant(context)
        let days = try KeyRequest.expiresInDays(try await optionalJSONBody(request))
        guard !tenant.isDeleted else { throw AdminError.tenantDeleted(tenant.name) }
        let date = now()
        let expires = days.map { date.addingTimeInterval(TimeInterval($0) * 86_400) }
        let issued = try await issue(for: tenant, expires: expires, at: date)
        let record = try await issuedRecord(issued.id)
        context.trail.update { $0.keyID = issued.id }
        try await commit(
            [
                entry(
                    "key.issue", by: actor, context: context, tenantID: tenant.id, keyID: issued.id,
                    after: record.auditSnapshot
                )
            ],
            context: context
        )
        return jsonResponse(AdminJSON.issued(record, key: issued.key, at: date), status: .created)
    }

    /// `POST /admin/v1/tenants/{id}/keys/{keyID}/rotate` with an optional `{"overlapDays": n}` (default 7): a new key
    /// (201, shown once) and the old one set to expire after the overlap.
    func rotateKey(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let actor = try await authorize(request, context: context, access: .write)
        let tenant = try await pathTenant(context)
        let old = try await pathKey(of: tenant, context: context)
        let overlapDays = try KeyRequest.overlapDays(try await optionalJSONBody(request))
        guard !tenant.isDeleted else { throw AdminError.tenantDeleted(tenant.name) }
        let date = now()
        guard old.isActive(at: date) else {
            throw AdminError.conflict(
                "The key \(old.id) is revoked or expired; issue a new key instead of rotating it.")
        }
        let overlap = overlapDays.map { TimeInterval($0) * 86_400 } ?? KeyLifecycle.defaultOverlap
        let rotated: (issued: TenantKeys.Issued, tenant: Tenant, old: TenantKeyRecord)
        do {
            rotated = try await KeyLifecycle.rotate(keyID: old.id, overlap: overlap, in: relay.store, now: date)
        } catch let failure as KeyLifecycle.Failure {
            throw AdminError.conflict(Self.sentence(failure.description))
        } catch {
            throw AdminError.storeUnavailable
        }
        let record = try await issuedRecord(rotated.issued.id)
        try await commit(
            [
                entry(
                    "key.rotate", by: actor, context: context, tenantID: tenant.id, keyID: old.id,
                    before: old.auditSnapshot, after: rotated.old.auditSnapshot,
                    detail: "replaced by key \(record.id)"
                ),
                entry(
                    "key.issue", by: actor, context: context, tenantID: tenant.id, keyID: record.id,
                    after: record.auditSnapshot, detail: "replaces key \(old.id)"
                ),
            ],
            context: context
        )
        var answer = AdminJSON.issued(record, key: rotated.issued.key, at: date).objectValue ?? [:]
        answer["replaces"] = AdminJSON.key(rotated.old, at: date)
        return jsonResponse(.object(answer), status: .created)
    }

    /// `DELETE /admin/v1/tenants/{id}/keys/{keyID}`: revokes the key (at once; every instance refuses it within 5 s).
    /// Revoking a revoked key changes nothing.
    func revokeKey(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let actor = try await authorize(request, context: context, access: .write)
        let tenant = try await pathTenant(context)
        let key = try await pathKey(of: tenant, context: context)
        let date = now()
        var revoked = key
        if key.revokedAt == nil {
            revoked.revokedAt = date
            try await storeCall { try await relay.store.updateKey(revoked) }
        }
        try await commit(
            [
                entry(
                    "key.revoke", by: actor, context: context, tenantID: tenant.id, keyID: key.id,
                    before: key.auditSnapshot, after: revoked.auditSnapshot
                )
            ],
            context: context
        )
        return jsonResponse(AdminJSON.key(revoked, at: date))
    }

    /// The key named by the path's `{keyID}`, if it belongs to `tenant`.
    private func pathKey(of tenant: Tenant, context: RelayRequestContext) async throws(RelayHTTPError)
        -> TenantKeyRecord
    {
        let id = Self.pathParameter("keyID", context)
        let found = try await storeCall { try await relay.store.key(id: id) }
        guard let key = found, key.tenantID == tenant.id else { throw AdminError.keyNotFound(id) }
        context.trail.update { $0.keyID = key.id }
        return key
    }

    private func issue(for tenant: Tenant, expires: Date?, at date: Date) async throws(RelayHTTPError)
        -> TenantKeys.Issued
    {
        do {
            return try await KeyLifecycle.issue(for: tenant, expires: expires, in: relay.store, now: date)
        } catch let failure as KeyLifecycle.Failure {
            throw AdminError.conflict(Self.sentence(failure.description))
        } catch {
            throw AdminError.storeUnavailable
        }
    }

    /// The stored record of a key just issued.
    private func issuedRecord(_ id: String) async throws(RelayHTTPError) -> TenantKeyRecord {
        guard let record = try await storeCall({ try await relay.store.key(id: id) }) else {
            throw AdminError.storeUnavailable
        }
        return record
    }

    /// `KeyLifecycle`'s lower-case messages as sentences.
    private static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst() + "."
    }
}
