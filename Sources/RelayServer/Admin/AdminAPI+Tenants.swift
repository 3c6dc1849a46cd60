import Foundation
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

extension AdminAPI {
    /// `GET /admin/v1/tenants[?includeDeleted=true]`: `{"data": [tenant…]}`, oldest first.
    func listTenants(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .read)
        var query = AdminQuery(request, allowed: ["includeDeleted"])
        let includeDeleted = query.bool("includeDeleted") ?? false
        try query.finish()
        let tenants = try await administering { try await administration.tenants(includeDeleted: includeDeleted) }
        return jsonResponse(AdminJSON.list(tenants.map(AdminJSON.tenant)))
    }

    /// `POST /admin/v1/tenants`: 201 with the tenant.
    func createTenant(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        let changes = try TenantChanges.parse(
            try await readJSONBody(request, limit: relay.settings.maxBodyBytes),
            creating: true
        )
        let tenant = try await administering { try await administration.createTenant(changes) }
        return jsonResponse(AdminJSON.tenant(tenant), status: .created)
    }

    /// `GET /admin/v1/tenants/{id}`, deleted tenants included.
    func showTenant(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .read)
        return jsonResponse(AdminJSON.tenant(try await pathTenant(administration, context: context)))
    }

    /// `PATCH /admin/v1/tenants/{id}`: any subset of the creation fields, plus `disabled`.
    func updateTenant(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        return try await withPathTenant(administration, context: context) { tenant in
            let changes = try TenantChanges.parse(
                try await readJSONBody(request, limit: relay.settings.maxBodyBytes),
                creating: false
            )
            let updated = try await administering { try await administration.updateTenant(tenant, with: changes) }
            return jsonResponse(AdminJSON.tenant(updated))
        }
    }

    /// `POST /admin/v1/tenants/{id}/disable` and `…/enable`.
    func setDisabled(_ disabled: Bool, _ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        return try await withPathTenant(administration, context: context) { tenant in
            let updated = try await administering { try await administration.setDisabled(disabled, tenant) }
            return jsonResponse(AdminJSON.tenant(updated))
        }
    }

    /// `DELETE /admin/v1/tenants/{id}`: a soft delete. The tenant keeps its name, receipts, usage and audit records;
    /// its keys stop working (403 `TENANT_DISABLED`). Deleting a deleted tenant changes nothing.
    func deleteTenant(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        return try await withPathTenant(administration, context: context) { tenant in
            let deleted = try await administering { try await administration.deleteTenant(tenant) }
            return jsonResponse(AdminJSON.tenant(deleted))
        }
    }
}
