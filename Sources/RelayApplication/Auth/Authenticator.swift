import Foundation
package import RelayCore
package import RelayStore
import Synchronization

/// Who is calling: the tenant and the key it used.
package struct TenantIdentity: Sendable, Equatable {
    package var tenant: Tenant
    package var keyID: String
}

/// Why a tenant key was not accepted, and what the relay had learnt of the caller by then; each API renders the
/// reason (401, 403, 503), and the audit record of the refusal names the key id and tenant.
package struct AuthenticationFailure: Error, Equatable, Sendable {
    package enum Reason: Equatable, Sendable {
        /// Missing, malformed, unknown, revoked or expired, or a wrong secret: the caller is not told which.
        case unauthorized
        /// The key is good but its tenant is disabled or deleted.
        case tenantDisabled
        /// The store did not answer, so the key could not be checked.
        case storeUnavailable
    }

    package var reason: Reason
    /// The id of the key presented, when it had the shape of a key; never the key or its secret. What the caller
    /// claimed, not what it proved: with a wrong secret it is another's key id, which is what an auditor wants to see.
    package var keyID: String?
    /// The key's tenant, once the key is proved good (so only with ``Reason/tenantDisabled``).
    package var tenantID: String?

    package init(_ reason: Reason, keyID: String? = nil, tenantID: String? = nil) {
        self.reason = reason
        self.keyID = keyID
        self.tenantID = tenantID
    }
}

/// Checks tenant keys against the store, caching each key and tenant for a few seconds.
///
/// The cache is what lets every request skip the store, and its short life is what makes revocation and disabling
/// take effect on every instance within ``cacheLifetime``. An entry's age is measured on the clock's monotonic time;
/// key expiry and the time of key use are wall-clock dates.
package final class Authenticator: Sendable {
    package static let cacheLifetime: Duration = .seconds(5)

    private struct Entry {
        var record: TenantKeyRecord?
        var tenant: Tenant?
        var fetched: RelayClock.Instant
    }

    private let store: any PushStore
    private let clock: RelayClock
    private let cache = Mutex<[String: Entry]>([:])
    private let used = Mutex<Set<String>>([])

    package init(store: any PushStore, clock: RelayClock = .system) {
        self.store = store
        self.clock = clock
    }

    /// The identity behind a presented key.
    ///
    /// - Throws: ``AuthenticationFailure`` with its reason: ``AuthenticationFailure/Reason/unauthorized`` for a
    ///   missing, malformed, unknown, revoked or expired key, or a wrong secret (without saying which);
    ///   ``AuthenticationFailure/Reason/tenantDisabled`` for a disabled or deleted tenant;
    ///   ``AuthenticationFailure/Reason/storeUnavailable`` when the key could not be looked up. It carries the key id
    ///   presented (never the key) and, once known, the tenant.
    package func authenticate(_ presented: String?) async throws(AuthenticationFailure) -> TenantIdentity {
        guard let presented, let (id, secret) = TenantKeys.parse(presented) else {
            throw AuthenticationFailure(.unauthorized)
        }
        let (date, instant) = (clock.date, clock.now)
        let entry: Entry
        if let cached = cache.withLock({ $0[id] }), instant - cached.fetched < Self.cacheLifetime {
            entry = cached
        } else {
            do {
                let record = try await store.key(id: id)
                var tenant: Tenant?
                if let record { tenant = try await store.tenant(id: record.tenantID) }
                entry = Entry(record: record, tenant: tenant, fetched: instant)
            } catch {
                throw AuthenticationFailure(.storeUnavailable, keyID: id)
            }
            cache.withLock { $0[id] = entry }
        }
        guard let record = entry.record, record.isActive(at: date),
            TenantKeys.matches(secret: secret, hash: record.secretHash), let tenant = entry.tenant
        else { throw AuthenticationFailure(.unauthorized, keyID: id) }
        guard !tenant.disabled, !tenant.isDeleted else {
            throw AuthenticationFailure(.tenantDisabled, keyID: id, tenantID: tenant.id)
        }
        used.withLock { _ = $0.insert(id) }
        return TenantIdentity(tenant: tenant, keyID: id)
    }

    /// Writes the keys used since the last call as used now (called periodically, not per request).
    package func flushUsage() async throws {
        let ids = used.withLock { used in
            defer { used.removeAll() }
            return used
        }
        guard !ids.isEmpty else { return }
        try await store.markKeysUsed(ids, at: clock.date)
    }
}
