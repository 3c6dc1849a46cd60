package import Foundation
package import RelayCore
package import RelayStore

/// Tenant administration: creating, changing, disabling and deleting tenants, issuing, rotating and revoking their
/// keys, and reading their usage, the same way for every front end.
///
/// ### Overview
/// The command line (`pushrelay tenant …`, `key …`, `usage`) and the admin API (`/admin/v1`) are two front ends of
/// this one type: they read their own syntax into typed requests (``TenantChanges``, day counts, key references),
/// call an action here, and render its result (``AdminJSON`` for JSON, both) or its ``Failure``. So a tenant obeys
/// the same ``TenantRules`` whoever changes it, and each change leaves the same audit record, the actor aside.
///
/// ### Implementation
/// - An action checks, in this order: the tenant or key it names (not found), the values (``TenantRules``), then the
///   state (a deleted tenant, an inactive key, the key cap). The admin API resolves the tenant before it reads a body,
///   so its 404 still comes before its 400.
/// - The store has no transaction spanning a tenant change and the audit log, so the change is written first and its
///   records second; the action returns only once the records are durable (``AdminAuditSink``), and a failure in
///   between is ``Failure/auditNotStored(action:done:detail:)``, which says the change was stored.
/// - After a write the tenant or key is read back, so the answer and the audit record show it as the store holds it.
/// - Every `admin` record has the action as `outcome`, the tenant and key ids, and `before`/`after` snapshots
///   (`Tenant.auditSnapshot`, `TenantKeyRecord.auditSnapshot`), never a secret or a secret's hash.
/// - Time is ``now``, one reading per action: key dates, expiry checks and the records' times.
package struct TenantAdministration: Sendable {
    package let store: any PushStore
    package let audit: any AdminAuditSink
    /// The limits of a tenant created without its own: the relay's `[limits]`.
    package let tenantDefaults: RateLimits
    /// The relay's apps (`default` and each `[apps.<name>]`): a tenant may name only these; `nil` checks names only.
    package let configuredApps: Set<String>?
    package let now: @Sendable () -> Date

    package init(
        store: any PushStore,
        audit: any AdminAuditSink,
        tenantDefaults: RateLimits,
        configuredApps: Set<String>? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.store = store
        self.audit = audit
        self.tenantDefaults = tenantDefaults
        self.configuredApps = configuredApps
        self.now = now
    }

    // MARK: - Reading

    /// Every tenant, oldest first; deleted ones only with `includeDeleted`.
    package func tenants(includeDeleted: Bool) async throws(Failure) -> [Tenant] {
        let tenants = try await storeCall { try await store.tenants() }
        return tenants.filter { includeDeleted || !$0.isDeleted }
    }

    /// The tenant with this id, or else this name; deleted tenants included (they can be looked at, not changed).
    package func findTenant(_ reference: String) async throws(Failure) -> Tenant? {
        if let byID = try await storeCall({ try await store.tenant(id: reference) }) { return byID }
        return try await storeCall { try await store.tenant(named: reference) }
    }

    /// ``findTenant(_:)``, or ``Failure/tenantNotFound(_:)``.
    package func tenant(_ reference: String) async throws(Failure) -> Tenant {
        guard let tenant = try await findTenant(reference) else { throw .tenantNotFound(reference) }
        return tenant
    }

    /// The tenant's usage over the last `days` UTC days, today included (default 30).
    package func usage(of tenant: Tenant, days: Int? = nil) async throws(Failure) -> UsageReport {
        let days = days ?? TenantRules.defaultUsageDays
        if let problem = TenantRules.problem(Int64(days), in: TenantRules.usageDays) {
            throw .invalid([TenantRules.Violation(.days, problem)])
        }
        let fromDay = UsageReport.fromDay(days: days, now: now())
        let rows = try await storeCall { try await store.usage(tenantID: tenant.id, fromDay: fromDay) }
        return UsageReport(tenant: tenant, fromDay: fromDay, rows: rows)
    }

    // MARK: - Changing

    /// Creates a tenant from `changes` (`name` required), with the relay's `[limits]` for the limits left out.
    package func createTenant(_ changes: TenantChanges) async throws(Failure) -> Tenant {
        try Self.check(changes, creating: true)
        let date = now()
        let tenant = changes.applied(to: Tenant(name: changes.name ?? "", limits: tenantDefaults, createdAt: date))
        try check(tenant)
        do {
            try await store.createTenant(tenant)
        } catch StoreError.duplicate {
            throw .nameTaken(tenant.name)
        } catch {
            throw .storeUnavailable(detail: "\(error)")
        }
        let created = try await storedTenant(tenant)
        try await record(
            [entry("tenant.create", at: date, tenantID: created.id, after: created.auditSnapshot)],
            done: "tenant \(created.name) was created"
        )
        return created
    }

    /// Applies `changes` to `tenant`; a deleted tenant cannot change.
    package func updateTenant(_ tenant: Tenant, with changes: TenantChanges) async throws(Failure) -> Tenant {
        try Self.check(changes, creating: false)
        let updated = changes.applied(to: tenant)
        // A tenant whose apps the operator did not touch keeps them, even one the configuration no longer has.
        if changes.apps != nil || changes.defaultApp != nil { try check(updated) }
        return try await save(updated, replacing: tenant, action: "tenant.update", done: "updated")
    }

    /// Disables the tenant (its keys get 403 `TENANT_DISABLED`) or enables it again; a deleted tenant cannot change.
    package func setDisabled(_ disabled: Bool, _ tenant: Tenant) async throws(Failure) -> Tenant {
        var updated = tenant
        updated.disabled = disabled
        let action = disabled ? "tenant.disable" : "tenant.enable"
        return try await save(updated, replacing: tenant, action: action, done: disabled ? "disabled" : "enabled")
    }

    /// A soft delete: the tenant keeps its name, receipts, usage and audit records, and its keys stop working.
    /// Deleting a deleted tenant changes nothing and answers as the first time.
    package func deleteTenant(_ tenant: Tenant) async throws(Failure) -> Tenant {
        let date = now()
        var updated = tenant
        if !tenant.isDeleted {
            updated.deletedAt = date
            updated = try await storeTenant(updated)
        }
        try await record(
            [
                entry(
                    "tenant.delete", at: date, tenantID: tenant.id, before: tenant.auditSnapshot,
                    after: updated.auditSnapshot
                )
            ],
            done: "tenant \(tenant.name) was deleted"
        )
        return updated
    }

    // MARK: - Shared steps

    /// Throws every rule `changes` break.
    static func check(_ changes: TenantChanges, creating: Bool) throws(Failure) {
        let violations = TenantRules.violations(in: changes, creating: creating)
        guard violations.isEmpty else { throw .invalid(violations) }
    }

    /// Throws every rule between the fields of `tenant` as changed (its apps).
    private func check(_ tenant: Tenant) throws(Failure) {
        let violations = TenantRules.violations(of: tenant, configuredApps: configuredApps)
        guard violations.isEmpty else { throw .invalid(violations) }
    }

    /// Stores a changed tenant and its audit record.
    private func save(_ updated: Tenant, replacing tenant: Tenant, action: String, done: String) async throws(Failure)
        -> Tenant
    {
        guard !tenant.isDeleted else { throw .tenantDeleted(tenant.name) }
        let date = now()
        let stored = try await storeTenant(updated)
        try await record(
            [entry(action, at: date, tenantID: tenant.id, before: tenant.auditSnapshot, after: stored.auditSnapshot)],
            done: "tenant \(stored.name) was \(done)"
        )
        return stored
    }

    /// Writes `tenant` and reads it back.
    private func storeTenant(_ tenant: Tenant) async throws(Failure) -> Tenant {
        do {
            try await store.updateTenant(tenant)
        } catch StoreError.duplicate {
            throw .nameTaken(tenant.name)
        } catch StoreError.notFound {
            throw .tenantNotFound(tenant.id)
        } catch {
            throw .storeUnavailable(detail: "\(error)")
        }
        return try await storedTenant(tenant)
    }

    /// `tenant` as the store now holds it (dates at the store's precision).
    private func storedTenant(_ tenant: Tenant) async throws(Failure) -> Tenant {
        try await storeCall { try await store.tenant(id: tenant.id) } ?? tenant
    }

    /// Runs a store call; any failure is ``Failure/storeUnavailable(detail:)``.
    func storeCall<T>(_ body: () async throws -> T) async throws(Failure) -> T {
        do {
            return try await body()
        } catch {
            throw .storeUnavailable(detail: "\(error)")
        }
    }

    /// An `admin` audit entry of `action` by this administration's actor.
    func entry(
        _ action: String,
        at date: Date,
        tenantID: String,
        keyID: String? = nil,
        before: JSONValue? = nil,
        after: JSONValue? = nil,
        detail: String? = nil
    ) -> AuditEntry {
        .admin(
            action, actor: audit.actor, time: date, tenantID: tenantID, keyID: keyID, before: before, after: after,
            detail: detail
        )
    }

    /// Commits the records of a change that is stored; `done` says what was done, should they fail.
    func record(_ entries: [AuditEntry], done: String) async throws(Failure) {
        do {
            try await audit.commit(entries)
        } catch {
            throw .auditNotStored(action: entries.first?.outcome ?? "", done: done, detail: "\(error)")
        }
    }
}
