import Foundation
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

extension AdminAPI {
    /// `GET /admin/v1/tenants/{id}/keys`: `{"data": [key…]}`, oldest first; never a secret.
    func listKeys(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .read)
        return try await withPathTenant(administration, context: context) { tenant in
            let keys = try await administering { try await administration.keys(of: tenant) }
            let date = now()
            return jsonResponse(AdminJSON.list(keys.map { AdminJSON.key($0, at: date) }))
        }
    }

    /// `POST /admin/v1/tenants/{id}/keys` with an optional `{"expiresInDays": n}`: 201 with the key, shown once.
    func issueKey(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        return try await withPathTenant(administration, context: context) { tenant in
            let days = try KeyRequest.expiresInDays(try await optionalJSONBody(request))
            let issued = try await administering { try await administration.issueKey(for: tenant, expiresInDays: days) }
            return jsonResponse(AdminJSON.issued(issued, at: now()), status: .created)
        }
    }

    /// `POST /admin/v1/tenants/{id}/keys/{keyID}/rotate` with an optional `{"overlapDays": n}` (default 7): a new key
    /// (201, shown once) and the old one set to expire after the overlap.
    func rotateKey(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        return try await withPathTenant(administration, context: context) { tenant in
            try await withPathKey(of: tenant, administration, context: context) { old in
                let overlapDays = try KeyRequest.overlapDays(try await optionalJSONBody(request))
                let rotated = try await administering {
                    try await administration.rotateKey(old, overlapDays: overlapDays)
                }
                return jsonResponse(AdminJSON.rotated(rotated, at: now()), status: .created)
            }
        }
    }

    /// `DELETE /admin/v1/tenants/{id}/keys/{keyID}`: revokes the key (at once; every instance refuses it within 5 s).
    /// Revoking a revoked key changes nothing.
    func revokeKey(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        return try await withPathTenant(administration, context: context) { tenant in
            try await withPathKey(of: tenant, administration, context: context) { key in
                let revoked = try await administering { try await administration.revokeKey(key) }
                return jsonResponse(AdminJSON.key(revoked, at: now()))
            }
        }
    }

    /// Runs the rest of a route on the key named by the path's `{keyID}` (its id, or a whole key, taken for its id),
    /// if it belongs to `tenant`: a refusal from `body` is recorded with that key's id.
    private func withPathKey<T>(
        of tenant: Tenant,
        _ administration: TenantAdministration,
        context: AdminRequestContext,
        _ body: (TenantKeyRecord) async throws -> T
    ) async throws -> T {
        let reference = Self.pathParameter("keyID", context)
        let key = try await administering { try await administration.key(reference, of: tenant) }
        return try await RefusalSubject(keyID: key.id).attributing { try await body(key) }
    }
}
