import Foundation
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

@Suite struct KeyLifecycleRulesTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func atMostFiveActiveKeysPerTenant() async throws {
        let store = MemoryStore()
        let tenant = Tenant(name: "acme")
        try await store.createTenant(tenant)
        for _ in 0..<KeyLifecycle.maxActiveKeys {
            _ = try await KeyLifecycle.issue(for: tenant, expires: nil, in: store, now: t0)
        }
        await #expect(throws: KeyLifecycle.Failure.tooManyActiveKeys(tenant: "acme", count: 5)) {
            try await KeyLifecycle.issue(for: tenant, expires: nil, in: store, now: t0)
        }
        // Rotation works at the cap: the key being replaced does not count.
        let any = try #require(try await store.keys(tenantID: tenant.id).last)
        let rotated = try await KeyLifecycle.rotate(keyID: any.id, overlap: 60, in: store, now: t0)
        #expect(try await store.key(id: rotated.issued.id) != nil)
        // An expired key no longer counts.
        var first = try #require(try await store.keys(tenantID: tenant.id).first)
        first.expiresAt = t0
        try await store.updateKey(first)
        await #expect(throws: KeyLifecycle.Failure.self) {
            try await KeyLifecycle.issue(for: tenant, expires: nil, in: store, now: t0.addingTimeInterval(1))
        }
        // Once the rotated key's overlap has passed too, there is room again.
        let issued = try await KeyLifecycle.issue(for: tenant, expires: nil, in: store, now: t0.addingTimeInterval(61))
        #expect(try await store.key(id: issued.id) != nil)
    }

    @Test func rotationKeepsTheOldKeyForTheOverlap() async throws {
        let store = MemoryStore()
        let tenant = Tenant(name: "acme")
        try await store.createTenant(tenant)
        let old = try await KeyLifecycle.issue(for: tenant, expires: nil, in: store, now: t0)
        let rotated = try await KeyLifecycle.rotate(keyID: old.id, overlap: 3600, in: store, now: t0)
        #expect(rotated.old.expiresAt == t0.addingTimeInterval(3600))
        let stored = try #require(try await store.key(id: old.id))
        #expect(stored.isActive(at: t0.addingTimeInterval(3599)))
        #expect(!stored.isActive(at: t0.addingTimeInterval(3600)))
        #expect(try await store.key(id: rotated.issued.id)?.isActive(at: t0.addingTimeInterval(7200)) == true)
        // A key whose overlap is already shorter keeps its earlier end.
        var shortly = try #require(try await store.key(id: rotated.issued.id))
        shortly.expiresAt = t0.addingTimeInterval(60)
        try await store.updateKey(shortly)
        let again = try await KeyLifecycle.rotate(keyID: shortly.id, overlap: 3600, in: store, now: t0)
        #expect(again.old.expiresAt == t0.addingTimeInterval(60))
        await #expect(throws: KeyLifecycle.Failure.noActiveKey("nope")) {
            try await KeyLifecycle.rotate(keyID: "nope", in: store, now: t0)
        }
    }
}
