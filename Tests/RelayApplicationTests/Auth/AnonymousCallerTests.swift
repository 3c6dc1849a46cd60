import Foundation
import RelayCore
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication

/// Issue 20: a caller without a valid key costs the relay O(1). Unknown key ids are not kept beyond a small bounded
/// cache; an unknown key id and a wrong secret take the same path; refusals without a key are tallied by address and
/// minute; failed authentications are limited per address, in a bounded table.
@Suite(.timeLimit(.minutes(1)))
struct AnonymousCallerTests {
    /// A store that counts the key and tenant lookups the authenticator makes.
    final class CountingStore: ForwardingPushStore {
        let base = MemoryStore()
        let keyLookups = Atomic(0)
        let tenantLookups = Atomic(0)

        func key(id: String) async throws -> TenantKeyRecord? {
            keyLookups.add(1, ordering: .relaxed)
            return try await base.key(id: id)
        }

        func tenant(id: String) async throws -> Tenant? {
            tenantLookups.add(1, ordering: .relaxed)
            return try await base.tenant(id: id)
        }

        var lookups: (keys: Int, tenants: Int) {
            (keyLookups.load(ordering: .relaxed), tenantLookups.load(ordering: .relaxed))
        }
    }

    static func unknownKey(_ index: Int) -> String {
        let id = String(index, radix: 16)
        return "prk_" + String(repeating: "0", count: 16 - id.count) + id + "_" + String(repeating: "A", count: 43)
    }

    @Test func oneHundredThousandUnknownKeyIdsLeaveTheCacheBounded() async throws {
        let clock = ManualClock()
        let authenticator = Authenticator(store: MemoryStore(), clock: .manual(clock))
        for index in 0..<100_000 {
            await #expect(throws: AuthenticationFailure.self) {
                try await authenticator.authenticate(Self.unknownKey(index))
            }
        }
        let counts = authenticator.cachedKeyCounts
        #expect(counts.known == 0)
        #expect(counts.unknown <= Authenticator.maximumUnknownKeys)
    }

    @Test func anUnknownKeyIdAndAWrongSecretTakeTheSamePath() async throws {
        let clock = ManualClock()
        let store = CountingStore()
        let tenant = Tenant(name: "acme")
        try await store.createTenant(tenant)
        let issued = TenantKeys.issue()
        try await store.createKey(TenantKeyRecord(id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash))
        let authenticator = Authenticator(store: store, clock: .manual(clock))
        let wrongSecret = "prk_\(issued.id)_" + String(repeating: "B", count: 43)
        let unknown = Self.unknownKey(42)

        // First sight: one key lookup each, and no tenant lookup for either (the tenant is read for a good secret).
        for presented in [wrongSecret, unknown] {
            let before = store.lookups
            let failure = await #expect(throws: AuthenticationFailure.self) {
                try await authenticator.authenticate(presented)
            }
            #expect(failure?.reason == .unauthorized)
            #expect(store.lookups.keys == before.keys + 1)
            #expect(store.lookups.tenants == before.tenants)
        }
        // While cached: no lookup for either.
        let cached = store.lookups
        for presented in [wrongSecret, unknown] {
            await #expect(throws: AuthenticationFailure.self) { try await authenticator.authenticate(presented) }
        }
        #expect(store.lookups == cached)
        // The good secret reads the tenant once, from the entry the wrong secret left.
        let identity = try await authenticator.authenticate(issued.key)
        #expect(identity.tenant.id == tenant.id)
        #expect(store.lookups == (cached.keys, cached.tenants + 1))
        _ = try await authenticator.authenticate(issued.key)
        #expect(store.lookups == (cached.keys, cached.tenants + 1))
        // After the cache's lifetime, each is looked up again, the same way.
        clock.advance(by: Authenticator.cacheLifetime)
        for presented in [wrongSecret, unknown] {
            await #expect(throws: AuthenticationFailure.self) { try await authenticator.authenticate(presented) }
        }
        #expect(store.lookups.keys == cached.keys + 2)
    }

    @Test func aRevokedKeyWithItsRightSecretIsRefused() async throws {
        let store = MemoryStore()
        let tenant = Tenant(name: "acme")
        try await store.createTenant(tenant)
        let issued = TenantKeys.issue()
        var record = TenantKeyRecord(id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash)
        record.revokedAt = Date(timeIntervalSince1970: 0)
        try await store.createKey(record)
        let authenticator = Authenticator(store: store)
        await #expect(throws: AuthenticationFailure(.unauthorized, keyID: issued.id)) {
            try await authenticator.authenticate(issued.key)
        }
    }

    // MARK: - Tallies of refusals

    @Test func oneHundredThousandRefusalsFromOneAddressAreTwoRecords() {
        let refusals = AnonymousRefusals()
        let start: Int64 = 1_800_000_000_000
        var immediate = 0
        for index in 0..<100_000 {
            let first = refusals.refused(
                client: "203.0.113.7", millis: start + Int64(index % 50_000), outcome: "UNAUTHORIZED",
                keyID: String(index, radix: 16))
            if first { immediate += 1 }
        }
        #expect(immediate == 1)
        #expect(refusals.count == 1)
        // Nothing is written while the minute lasts.
        #expect(refusals.drain(before: start + 59_999).isEmpty)
        let records = refusals.drain(before: start + 60_000)
        #expect(records.count == 1)
        #expect(records.first?.client == "203.0.113.7")
        #expect(records.first?.keyID == nil)  // many key ids: the first few are listed in the detail
        #expect(records.first?.detail?.hasPrefix("aggregated: 99999 more refusals") == true)
        #expect(records.first?.detail?.contains("key ids: 1, 2, 3, 4, 5 and others") == true)
        #expect(refusals.count == 0)
    }

    @Test func oneHundredThousandAddressesStayWithinTheTable() {
        let refusals = AnonymousRefusals()
        let start: Int64 = 1_800_000_000_000
        var immediate = 0
        for index in 0..<100_000 {
            if refusals.refused(client: "client-\(index)", millis: start, outcome: "UNAUTHORIZED", keyID: nil) {
                immediate += 1
            }
        }
        #expect(immediate == AnonymousRefusals.maximumClients)
        #expect(refusals.count == AnonymousRefusals.maximumClients + 1)
        let records = refusals.drain(before: nil)
        // One record for the addresses beyond the table, none for those seen once (recorded at once).
        #expect(records.count == 1)
        #expect(records.first?.client == nil)
        #expect(records.first?.detail?.hasPrefix("aggregated: 90000 more refusals") == true)
    }

    @Test func eachMinuteHasItsOwnFirstRecord() {
        let refusals = AnonymousRefusals()
        let start: Int64 = 1_800_000_000_000
        #expect(refusals.refused(client: "a", millis: start, outcome: "UNAUTHORIZED", keyID: nil))
        #expect(!refusals.refused(client: "a", millis: start + 1, outcome: "UNAUTHORIZED", keyID: nil))
        #expect(refusals.refused(client: "a", millis: start + 60_000, outcome: "UNAUTHORIZED", keyID: nil))
        #expect(refusals.refused(client: "b", millis: start + 60_000, outcome: "UNAUTHORIZED", keyID: nil))
        #expect(refusals.drain(before: start + 120_000).count == 1)
    }

    // MARK: - Failure limit

    @Test func anAddressIsLimitedAfterItsBurstAndRefilledByTime() {
        let failures = AuthenticationFailures()
        for _ in 0..<AuthenticationFailures.burst {
            #expect(failures.retryAfter(client: "a", now: 100) == nil)
            #expect(failures.failed(client: "a", now: 100) == nil)
        }
        #expect(failures.retryAfter(client: "a", now: 100) == 6)
        #expect(failures.retryAfter(client: "b", now: 100) == nil)
        #expect(failures.retryAfter(client: nil, now: 100) == nil)
        // Failures beyond the burst are refused, not counted: however many, 6 s later one more is allowed, not two.
        for _ in 0..<1_000 { #expect(failures.failed(client: "a", now: 100) == 6) }
        #expect(failures.retryAfter(client: "a", now: 106) == nil)
        #expect(failures.failed(client: "a", now: 106) == nil)
        #expect(failures.failed(client: "a", now: 106) == 6)
        #expect(failures.failed(client: nil, now: 106) == nil)
    }

    @Test func theTableOfAddressesIsBounded() {
        let failures = AuthenticationFailures()
        for index in 0..<100_000 { #expect(failures.failed(client: "client-\(index)", now: 100) == nil) }
        #expect(failures.count == AuthenticationFailures.maximumClients)
        // Once their buckets are full again, old addresses make room for new ones.
        #expect(failures.failed(client: "late", now: 100 + 7) == nil)
        #expect(failures.count == 1)
    }
}
