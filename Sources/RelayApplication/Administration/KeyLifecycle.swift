package import Foundation
package import RelayStore

/// Issuing and rotating tenant keys, with the rules operators rely on: at most ``maxActiveKeys`` active keys per
/// tenant, and rotation that lets the old key work for an overlap so that an install can switch without a gap.
package enum KeyLifecycle {
    /// At most this many active keys per tenant, so that keys are rotated rather than accumulated.
    package static let maxActiveKeys = 5
    /// How long a rotated key keeps working by default.
    package static let defaultOverlap = TimeInterval(TenantRules.defaultOverlapDays) * TenantRules.secondsPerDay

    package enum Failure: Error, Equatable, CustomStringConvertible {
        case tooManyActiveKeys(tenant: String, count: Int)
        case noActiveKey(String)
        case tenantGone(String)

        package var description: String {
            switch self {
            case .tooManyActiveKeys(let tenant, let count):
                "tenant '\(tenant)' already has \(count) active keys (the most allowed); revoke or rotate one first"
            case .noActiveKey(let id): "no active key with id '\(id)'"
            case .tenantGone(let id): "the key's tenant \(id) no longer exists"
            }
        }
    }

    /// Issues and stores a key (shown once by the caller). `replacing` names a key being rotated out, which does not
    /// count against the cap. `now` comes from the caller's clock (``TenantAdministration``'s).
    package static func issue(
        for tenant: Tenant,
        expires: Date?,
        in store: any PushStore,
        now: Date,
        replacing: String? = nil
    ) async throws -> TenantKeys.Issued {
        let active = try await store.keys(tenantID: tenant.id).filter { $0.isActive(at: now) && $0.id != replacing }
        guard active.count < maxActiveKeys else {
            throw Failure.tooManyActiveKeys(tenant: tenant.name, count: active.count)
        }
        let issued = TenantKeys.issue()
        try await store.createKey(
            TenantKeyRecord(
                id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash, createdAt: now, expiresAt: expires)
        )
        return issued
    }

    /// Issues a replacement for an active key and sets the old key to expire after `overlap`.
    ///
    /// - Returns: the new key and the old key as updated.
    package static func rotate(
        keyID: String,
        overlap: TimeInterval = defaultOverlap,
        in store: any PushStore,
        now: Date
    ) async throws -> (issued: TenantKeys.Issued, tenant: Tenant, old: TenantKeyRecord) {
        guard var old = try await store.key(id: keyID), old.isActive(at: now) else { throw Failure.noActiveKey(keyID) }
        guard let tenant = try await store.tenant(id: old.tenantID) else { throw Failure.tenantGone(old.tenantID) }
        // The new key first (the key it replaces does not count against the cap), then the old key's end.
        let issued = try await issue(for: tenant, expires: nil, in: store, now: now, replacing: old.id)
        let ends = now.addingTimeInterval(overlap)
        old.expiresAt = min(old.expiresAt ?? ends, ends)
        try await store.updateKey(old)
        return (issued, tenant, old)
    }
}
