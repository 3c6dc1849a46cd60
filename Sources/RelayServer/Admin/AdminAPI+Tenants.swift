import Foundation
import Hummingbird
import RelayCore
import RelayStore
package import RelayApplication

extension AdminAPI {
    /// `GET /admin/v1/tenants[?includeDeleted=true]`: `{"data": [tenant…]}`, oldest first.
    func listTenants(_ request: Request, context: RelayRequestContext) async throws -> Response {
        _ = try await authorize(request, context: context, access: .read)
        var query = AdminQuery(request, allowed: ["includeDeleted"])
        let includeDeleted = query.bool("includeDeleted") ?? false
        try query.finish()
        let tenants = try await storeCall { try await relay.store.tenants() }
        let shown = tenants.filter { includeDeleted || !$0.isDeleted }
        return jsonResponse(.object(["data": .array(shown.map(AdminJSON.tenant))]))
    }

    /// `POST /admin/v1/tenants`: 201 with the tenant.
    func createTenant(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let actor = try await authorize(request, context: context, access: .write)
        let changes = try TenantChanges.parse(
            try await readJSONBody(request, limit: relay.settings.maxBodyBytes),
            creating: true
        )
        // `parse` requires the name when creating; the fallback is never used.
        let tenant = changes.applied(to: Tenant(name: changes.name ?? "", limits: relay.settings.tenantDefaults, createdAt: now()))
        do {
            try await relay.store.createTenant(tenant)
        } catch StoreError.duplicate {
            throw AdminError.conflict(Self.nameTaken(tenant.name))
        } catch {
            throw AdminError.storeUnavailable
        }
        context.trail.update { $0.tenantID = tenant.id }
        try await commit(
            [entry("tenant.create", by: actor, context: context, tenantID: tenant.id, after: tenant.auditSnapshot)],
            context: context
        )
        return jsonResponse(AdminJSON.tenant(tenant), status: .created)
    }

    /// `GET /admin/v1/tenants/{id}`, deleted tenants included.
    func showTenant(_ request: Request, context: RelayRequestContext) async throws -> Response {
        _ = try await authorize(request, context: context, access: .read)
        return jsonResponse(AdminJSON.tenant(try await pathTenant(context)))
    }

    /// `PATCH /admin/v1/tenants/{id}`: any subset of the creation fields, plus `disabled`.
    func updateTenant(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let actor = try await authorize(request, context: context, access: .write)
        let tenant = try await pathTenant(context)
        let changes = try TenantChanges.parse(
            try await readJSONBody(request, limit: relay.settings.maxBodyBytes),
            creating: false
        )
        return try await save(
            changes.applied(to: tenant), replacing: tenant, action: "tenant.update", by: actor, context: context)
    }

    /// `POST /admin/v1/tenants/{id}/disable` and `…/enable`.
    func setDisabled(_ disabled: Bool, _ request: Request, context: RelayRequestContext) async throws -> Response {
        let actor = try await authorize(request, context: context, access: .write)
        let tenant = try await pathTenant(context)
        var updated = tenant
        updated.disabled = disabled
        let action = disabled ? "tenant.disable" : "tenant.enable"
        return try await save(updated, replacing: tenant, action: action, by: actor, context: context)
    }

    /// `DELETE /admin/v1/tenants/{id}`: a soft delete. The tenant keeps its name, receipts, usage and audit records;
    /// its keys stop working (403 `TENANT_DISABLED`). Deleting a deleted tenant changes nothing.
    func deleteTenant(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let actor = try await authorize(request, context: context, access: .write)
        let tenant = try await pathTenant(context)
        var updated = tenant
        if !tenant.isDeleted {
            updated.deletedAt = now()
            try await storeTenant(updated)
        }
        try await commit(
            [
                entry(
                    "tenant.delete", by: actor, context: context, tenantID: tenant.id,
                    before: tenant.auditSnapshot, after: updated.auditSnapshot
                )
            ],
            context: context
        )
        return jsonResponse(AdminJSON.tenant(updated))
    }

    /// Stores a changed tenant and its audit record; a deleted tenant cannot change.
    private func save(
        _ updated: Tenant,
        replacing tenant: Tenant,
        action: String,
        by actor: OperatorRecord,
        context: RelayRequestContext
    ) async throws(RelayHTTPError) -> Response {
        guard !tenant.isDeleted else { throw AdminError.tenantDeleted(tenant.name) }
        try await storeTenant(updated)
        try await commit(
            [
                entry(
                    action, by: actor, context: context, tenantID: tenant.id,
                    before: tenant.auditSnapshot, after: updated.auditSnapshot
                )
            ],
            context: context
        )
        return jsonResponse(AdminJSON.tenant(updated))
    }

    private func storeTenant(_ tenant: Tenant) async throws(RelayHTTPError) {
        do {
            try await relay.store.updateTenant(tenant)
        } catch StoreError.duplicate {
            throw AdminError.conflict(Self.nameTaken(tenant.name))
        } catch StoreError.notFound {
            throw AdminError.tenantNotFound(tenant.id)
        } catch {
            throw AdminError.storeUnavailable
        }
    }

    private static func nameTaken(_ name: String) -> String {
        "A tenant named '\(name)' already exists (deleted tenants keep their names); choose another name."
    }
}
