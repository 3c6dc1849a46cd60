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
///
/// Only keys that exist are cached for as long as they are used; key ids the store does not know go to a negative
/// cache of at most ``maximumUnknownKeys`` entries, so that callers presenting ever new key ids cannot grow the
/// relay (100,000 of them once took it from 53 to 127 MB, never released). Every presented secret is hashed and
/// compared, against a fixed dummy hash when the key id is unknown, so that a wrong secret for a real key id and an
/// unknown key id take the same path and time.
package final class Authenticator: Sendable {
    package static let cacheLifetime: Duration = .seconds(5)
    /// The most unknown key ids remembered at once (for ``cacheLifetime``); beyond it, they are not remembered.
    package static let maximumUnknownKeys = 1_024

    private struct Entry {
        var record: TenantKeyRecord?
        var tenant: Tenant?
        var fetched: RelayClock.Instant
        /// Whether ``tenant`` was read: only once a secret matched the key, so that a wrong secret costs no more
        /// than an unknown key id.
        var tenantRead = false
    }

    private struct Cache {
        var known: [String: Entry] = [:]
        /// When each unknown key id was looked up.
        var unknown: [String: RelayClock.Instant] = [:]

        func entry(_ id: String, now: RelayClock.Instant) -> Entry? {
            if let entry = known[id], now - entry.fetched < Authenticator.cacheLifetime { return entry }
            if let fetched = unknown[id], now - fetched < Authenticator.cacheLifetime {
                return Entry(record: nil, tenant: nil, fetched: fetched, tenantRead: true)
            }
            return nil
        }

        mutating func insert(_ id: String, _ entry: Entry, now: RelayClock.Instant) {
            guard entry.record == nil else {
                known[id] = entry
                return
            }
            known[id] = nil
            if unknown.count >= Authenticator.maximumUnknownKeys {
                unknown = unknown.filter { now - $0.value < Authenticator.cacheLifetime }
            }
            if unknown.count < Authenticator.maximumUnknownKeys { unknown[id] = entry.fetched }
        }
    }

    /// What an unknown key id's secret is compared with: the hash of no secret a key can have (secrets are at least
    /// 43 characters), so the comparison always fails, after the same work as for a real key.
    private static let dummyHash = TenantKeys.hash(secret: "")

    private let store: any PushStore
    private let clock: RelayClock
    private let cache = Mutex(Cache())
    private let used = Mutex<Set<String>>([])
    /// How long a request waits for a key or tenant the cache does not hold (`[store] request_timeout_ms`); `nil`:
    /// as long as the store takes.
    private let deadline: StoreCallDeadline?

    package init(store: any PushStore, clock: RelayClock = .system, deadline: StoreCallDeadline? = nil) {
        self.store = store
        self.clock = clock
        self.deadline = deadline
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
        var entry: Entry
        if let cached = cache.withLock({ $0.entry(id, now: instant) }) {
            entry = cached
        } else {
            do {
                entry = Entry(
                    record: try await read { [store] in try await store.key(id: id) }, tenant: nil, fetched: instant)
            } catch {
                throw AuthenticationFailure(.storeUnavailable, keyID: id)
            }
            cache.withLock { $0.insert(id, entry, now: instant) }
        }
        // Hashed and compared whatever the record, so an unknown key id costs what a wrong secret does: one key
        // lookup (none while cached) and one comparison. The tenant is read only for a key proved good.
        let matches = TenantKeys.matches(secret: secret, hash: entry.record?.secretHash ?? Self.dummyHash)
        guard matches, let record = entry.record, record.isActive(at: date) else {
            throw AuthenticationFailure(.unauthorized, keyID: id)
        }
        if !entry.tenantRead {
            do {
                entry.tenant = try await read { [store] in try await store.tenant(id: record.tenantID) }
            } catch {
                throw AuthenticationFailure(.storeUnavailable, keyID: id)
            }
            entry.tenantRead = true
            cache.withLock { [entry] in $0.insert(id, entry, now: instant) }
        }
        guard let tenant = entry.tenant else { throw AuthenticationFailure(.unauthorized, keyID: id) }
        guard !tenant.disabled, !tenant.isDeleted else {
            throw AuthenticationFailure(.tenantDisabled, keyID: id, tenantID: tenant.id)
        }
        used.withLock { _ = $0.insert(id) }
        return TenantIdentity(tenant: tenant, keyID: id)
    }

    private func read<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let deadline else { return try await call() }
        return try await deadline.run(call)
    }

    /// The key ids cached: known ones and unknown ones (for tests of the memory bound).
    package var cachedKeyCounts: (known: Int, unknown: Int) {
        cache.withLock { ($0.known.count, $0.unknown.count) }
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
