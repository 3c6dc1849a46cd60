import Foundation
package import RelayStore

extension TenantAdministration {
    /// A key just issued: its stored record and the key itself, to be shown this once.
    package struct IssuedKey: Sendable {
        package var record: TenantKeyRecord
        package var key: String
    }

    /// A rotation: the new key, shown once, and the old key as changed (set to expire after the overlap).
    package struct RotatedKey: Sendable {
        package var issued: IssuedKey
        package var old: TenantKeyRecord
        /// The keys' tenant.
        package var tenant: Tenant
    }

    /// The tenant's keys, oldest first; never a secret.
    package func keys(of tenant: Tenant) async throws(Failure) -> [TenantKeyRecord] {
        try await storeCall { try await store.keys(tenantID: tenant.id) }
    }

    /// The key named by `reference`: its id, or the whole key (`prk_<id>_<secret>`, what an install holds), which
    /// is taken for its id and never repeated. With `tenant`, the key must be one of its keys.
    package func key(_ reference: String, of tenant: Tenant? = nil) async throws(Failure) -> TenantKeyRecord {
        guard let id = Self.keyID(from: reference) else { throw .keyNotFound(id: nil) }
        let found = try await storeCall { try await store.key(id: id) }
        guard let key = found, tenant.map({ key.tenantID == $0.id }) ?? true else {
            throw .keyNotFound(id: id)
        }
        return key
    }

    /// The tenant a key belongs to.
    package func owner(of key: TenantKeyRecord) async throws(Failure) -> Tenant {
        guard let tenant = try await storeCall({ try await store.tenant(id: key.tenantID) }) else {
            throw .tenantNotFound(key.tenantID)
        }
        return tenant
    }

    /// Issues a key for `tenant`, to expire after `expiresInDays` (never when `nil`). At most
    /// ``KeyLifecycle/maxActiveKeys`` active keys per tenant; a deleted tenant gets none.
    package func issueKey(for tenant: Tenant, expiresInDays: Int? = nil) async throws(Failure) -> IssuedKey {
        if let expiresInDays, let problem = TenantRules.problem(Int64(expiresInDays), in: TenantRules.expiresInDays) {
            throw .invalid([TenantRules.Violation(.expiresInDays, problem)])
        }
        guard !tenant.isDeleted else { throw .tenantDeleted(tenant.name) }
        let date = now()
        let expires = expiresInDays.map { date.addingTimeInterval(TimeInterval($0) * TenantRules.secondsPerDay) }
        let issued = try await lifecycle {
            try await KeyLifecycle.issue(for: tenant, expires: expires, in: store, now: date)
        }
        let stored = try await storedKey(issued.id)
        // Recorded before the key is shown; should that fail, the key was never shown and can be revoked.
        try await record(
            [entry("key.issue", at: date, tenantID: tenant.id, keyID: issued.id, after: stored.auditSnapshot)],
            done: "key \(issued.id) was issued but not shown (revoke it)"
        )
        return IssuedKey(record: stored, key: issued.key)
    }

    /// Issues a replacement for an active key and sets the old one to expire after `overlapDays` (default 7).
    package func rotateKey(_ old: TenantKeyRecord, overlapDays: Int? = nil) async throws(Failure) -> RotatedKey {
        if let overlapDays, let problem = TenantRules.problem(Int64(overlapDays), in: TenantRules.overlapDays) {
            throw .invalid([TenantRules.Violation(.overlapDays, problem)])
        }
        let tenant = try await owner(of: old)
        guard !tenant.isDeleted else { throw .tenantDeleted(tenant.name) }
        let date = now()
        guard old.isActive(at: date) else { throw .keyNotActive(old.id) }
        let overlap = TimeInterval(overlapDays ?? TenantRules.defaultOverlapDays) * TenantRules.secondsPerDay
        let rotated = try await lifecycle {
            try await KeyLifecycle.rotate(keyID: old.id, overlap: overlap, in: store, now: date)
        }
        let new = try await storedKey(rotated.issued.id)
        let changed = try await storedKey(old.id)
        try await record(
            [
                entry(
                    "key.rotate", at: date, tenantID: tenant.id, keyID: old.id, before: old.auditSnapshot,
                    after: changed.auditSnapshot, detail: "replaced by key \(new.id)"
                ),
                entry(
                    "key.issue", at: date, tenantID: tenant.id, keyID: new.id, after: new.auditSnapshot,
                    detail: "replaces key \(old.id)"
                ),
            ],
            done: "key \(old.id) was rotated to key \(new.id), which was not shown (revoke it)"
        )
        return RotatedKey(issued: IssuedKey(record: new, key: rotated.issued.key), old: changed, tenant: tenant)
    }

    /// Revokes a key at once (every relay refuses it within the authenticator's cache lifetime). Revoking a revoked
    /// key changes nothing and answers as the first time; a deleted tenant's keys can still be revoked.
    package func revokeKey(_ key: TenantKeyRecord) async throws(Failure) -> TenantKeyRecord {
        let date = now()
        var revoked = key
        if key.revokedAt == nil {
            revoked.revokedAt = date
            try await storeCall { try await store.updateKey(revoked) }
            revoked = try await storedKey(key.id)
        }
        try await record(
            [
                entry(
                    "key.revoke", at: date, tenantID: key.tenantID, keyID: key.id, before: key.auditSnapshot,
                    after: revoked.auditSnapshot
                )
            ],
            done: "key \(key.id) was revoked"
        )
        return revoked
    }

    /// The id in a key reference: a key id as given, or the id of a whole key; `nil` for anything else, which may
    /// hold a secret (a mangled key, a secret alone) and so is never repeated.
    package static func keyID(from reference: String) -> String? {
        func isKeyID(_ text: Substring) -> Bool { text.count == 16 && text.allSatisfy(\.isHexDigit) }
        if reference.hasPrefix(TenantKeys.prefix) {
            let rest = reference.dropFirst(TenantKeys.prefix.count)
            guard let separator = rest.firstIndex(of: "_"), isKeyID(rest[..<separator]) else { return nil }
            return String(rest[..<separator])
        }
        return isKeyID(reference[...]) ? reference : nil
    }

    /// A stored key, read back after a write.
    private func storedKey(_ id: String) async throws(Failure) -> TenantKeyRecord {
        guard let key = try await storeCall({ try await store.key(id: id) }) else {
            throw .storeUnavailable(detail: "key \(id) is not in the store after it was written")
        }
        return key
    }

    /// Runs a ``KeyLifecycle`` step, turning its failures into ours.
    private func lifecycle<T>(_ body: () async throws -> T) async throws(Failure) -> T {
        do {
            return try await body()
        } catch KeyLifecycle.Failure.tooManyActiveKeys(let tenant, let count) {
            throw .tooManyActiveKeys(tenant: tenant, count: count)
        } catch KeyLifecycle.Failure.noActiveKey(let id) {
            throw .keyNotActive(id)
        } catch KeyLifecycle.Failure.tenantGone(let id) {
            throw .tenantNotFound(id)
        } catch {
            throw .storeUnavailable(detail: "\(error)")
        }
    }
}
