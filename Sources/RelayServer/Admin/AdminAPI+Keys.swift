import Foundation
import Hummingbird
import RelayCore
import RelayStore
package import RelayApplication

extension AdminAPI {
    /// `GET /admin/v1/tenants/{id}/keys`: `{"data": [key…]}`, oldest first; never a secret.
    func listKeys(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let administration = try await self.administration(request, context: context, access: .read)
        let tenant = try await pathTenant(administration, context: context)
        let keys = try await administering { try await administration.keys(of: tenant) }
        let date = now()
        return jsonResponse(AdminJSON.list(keys.map { AdminJSON.key($0, at: date) }))
    }

    /// `POST /admin/v1/tenants/{id}/keys` with an optional `{"expiresInDays": n}`: 201 with the key, shown once.
    func issueKey(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let administration = try await self.administration(request, context: context, access: .write)
        let tenant = try await pathTenant(administration, context: context)
        let days = try KeyRequest.expiresInDays(try await optionalJSONBody(request))
        let issued = try await administering { try await administration.issueKey(for: tenant, expiresInDays: days) }
        context.trail.update { $0.keyID = issued.record.id }
        return jsonResponse(AdminJSON.issued(issued, at: now()), status: .created)
    }

    /// `POST /admin/v1/tenants/{id}/keys/{keyID}/rotate` with an optional `{"overlapDays": n}` (default 7): a new key
    /// (201, shown once) and the old one set to expire after the overlap.
    func rotateKey(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let administration = try await self.administration(request, context: context, access: .write)
        let tenant = try await pathTenant(administration, context: context)
        let old = try await pathKey(of: tenant, administration, context: context)
        let overlapDays = try KeyRequest.overlapDays(try await optionalJSONBody(request))
        let rotated = try await administering { try await administration.rotateKey(old, overlapDays: overlapDays) }
        return jsonResponse(AdminJSON.rotated(rotated, at: now()), status: .created)
    }

    /// `DELETE /admin/v1/tenants/{id}/keys/{keyID}`: revokes the key (at once; every instance refuses it within 5 s).
    /// Revoking a revoked key changes nothing.
    func revokeKey(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let administration = try await self.administration(request, context: context, access: .write)
        let tenant = try await pathTenant(administration, context: context)
        let key = try await pathKey(of: tenant, administration, context: context)
        let revoked = try await administering { try await administration.revokeKey(key) }
        return jsonResponse(AdminJSON.key(revoked, at: now()))
    }

    /// The key named by the path's `{keyID}` (its id, or a whole key, taken for its id), if it belongs to `tenant`.
    private func pathKey(
        of tenant: Tenant,
        _ administration: TenantAdministration,
        context: RelayRequestContext
    ) async throws(RelayHTTPError) -> TenantKeyRecord {
        let reference = Self.pathParameter("keyID", context)
        let key = try await administering { try await administration.key(reference, of: tenant) }
        context.trail.update { $0.keyID = key.id }
        return key
    }
}
