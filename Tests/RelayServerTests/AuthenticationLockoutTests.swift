import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayProviders
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Issue 36, item 2: no lock-out by another caller. A request with a valid tenant key or operator token is served
/// whatever other requests from its address did; only requests without a valid key are judged by their address, and
/// those still get 429 `TOO_MANY_AUTHENTICATION_FAILURES` past the threshold, at no more cost to the store than any
/// bad key.
@Suite(.timeLimit(.minutes(1)))
struct AuthenticationLockoutTests {
    /// A memory store that counts the lookups authentication makes.
    final class CountingStore: ForwardingPushStore {
        let base = MemoryStore()
        private let counts = Mutex((keys: 0, tenants: 0, operators: 0))

        func key(id: String) async throws -> TenantKeyRecord? {
            counts.withLock { $0.keys += 1 }
            return try await base.key(id: id)
        }

        func tenant(id: String) async throws -> Tenant? {
            counts.withLock { $0.tenants += 1 }
            return try await base.tenant(id: id)
        }

        func operatorRecord(id: String) async throws -> OperatorRecord? {
            counts.withLock { $0.operators += 1 }
            return try await base.operatorRecord(id: id)
        }

        var lookups: (keys: Int, tenants: Int, operators: Int) { counts.withLock { $0 } }
    }

    /// A relay over a counting store, whose clock stands still unless the test moves it (so that no failure is
    /// earned back while a test runs), with one tenant key and one admin operator.
    struct Fixture {
        let store = CountingStore()
        let clock = ManualClock(date: Date())
        let relay: Relay
        let tenantKey: String
        let operatorToken: String

        init() async throws {
            relay = Relay(
                store: store,
                senders: Dictionary(
                    uniqueKeysWithValues: Provider.allCases.map { ($0, ScriptedSender($0) as any PushSender) }),
                settings: RelaySettings(waitDeadline: .seconds(5)),
                clock: .manual(clock)
            )
            (_, tenantKey) = try await TestRelay.addTenant(to: store, name: "acme")
            let issued = OperatorTokens.issue()
            try await store.createOperator(
                OperatorRecord(id: issued.id, name: "alice", role: .admin, secretHash: issued.secretHash))
            operatorToken = issued.key
        }

        var application: some ApplicationProtocol {
            get throws { try buildApplication(RelayApplicationParts(relay: relay)) }
        }
    }

    static let push = AdminFixture.pushBody

    /// A key of the right shape whose id the store does not know.
    static func unknownKey(_ index: Int) -> String {
        let id = String(index, radix: 16)
        return "prk_" + String(repeating: "0", count: 16 - id.count) + id + "_" + String(repeating: "A", count: 43)
    }

    /// One request without a valid key, of the `index % 6`th kind: a malformed key, an unknown key id (a new one each
    /// time), a real key id with a wrong secret, an unknown key in the path, no key, and a bad operator token.
    static func badRequest(_ index: Int, fixture: Fixture, client: some TestClientProtocol) async throws
        -> TestResponse
    {
        let realID = try #require(TenantKeys.keyID(of: fixture.tenantKey))
        switch index % 6 {
        case 0: return try await client.post("/v1/push", key: "junk-\(index)", json: push)
        case 1: return try await client.post("/v1/push", key: unknownKey(index), json: push)
        case 2:
            return try await client.post(
                "/v1/push", key: "prk_\(realID)_" + String(repeating: "B", count: 43), json: push)
        case 3: return try await client.post("/t/\(unknownKey(index))/v1/push", key: nil, json: push)
        case 4: return try await client.post("/--/api/v2/push/send", key: nil, json: "[]")
        default:
            return try await client.admin(
                .get, "/admin/v1/tenants", token: "pro_0123456789abcdef_" + String(repeating: "C", count: 43))
        }
    }

    @Test func aThousandBadKeysFromAnAddressLockOutNoValidKeyOrToken() async throws {
        let fixture = try await Fixture()
        try await fixture.application.test(.live) { client in
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<1_000 {
                let response = try await Self.badRequest(index, fixture: fixture, client: client)
                statuses.append(response.status)
                if response.status == .tooManyRequests {
                    #expect(response.errorCode == "TOO_MANY_AUTHENTICATION_FAILURES")
                    #expect(response.headers[.retryAfter] == "6")
                }
            }
            // The first 20 are counted (401), every later one is refused as the address's (429), whatever its kind.
            #expect(statuses.prefix(AuthenticationFailures.burst).allSatisfy { $0 == .unauthorized })
            #expect(statuses.dropFirst(AuthenticationFailures.burst).allSatisfy { $0 == .tooManyRequests })

            // From the same address: the tenant's key, as Bearer and in the path, and the operator's token, served.
            #expect(try await client.post("/v1/push", key: fixture.tenantKey, json: Self.push).status == .ok)
            let inPath = try await client.post("/t/\(fixture.tenantKey)/v1/push", key: nil, json: Self.push)
            #expect(inPath.status == .ok)
            let receipts = try await client.post(
                "/t/\(fixture.tenantKey)/v1/receipts", key: nil, json: #"{"ids":["none"]}"#)
            #expect(receipts.status == .ok)
            #expect(try await client.admin(.get, "/admin/v1/tenants", token: fixture.operatorToken).status == .ok)
            // A key the authenticator has never seen (so not cached) is looked up and served at its first request.
            let (_, newKey) = try await TestRelay.addTenant(to: fixture.store, name: "beta")
            #expect(try await client.post("/t/\(newKey)/v1/push", key: nil, json: Self.push).status == .ok)
            #expect(try await client.post("/v1/push", key: newKey, json: Self.push).status == .ok)

            // And bad keys of every kind are still answered 429: valid requests earn the address nothing back.
            for index in 1_000..<1_012 {
                let response = try await Self.badRequest(index, fixture: fixture, client: client)
                #expect(response.status == .tooManyRequests)
                #expect(response.errorCode == "TOO_MANY_AUTHENTICATION_FAILURES")
            }
        }
        // One address held, and the unknown key ids within the authenticator's bounded cache.
        #expect(fixture.relay.authenticationFailures.count == 1)
        #expect(fixture.relay.authenticator.cachedKeyCounts.unknown <= Authenticator.maximumUnknownKeys)
    }

    @Test func aPenalisedAddressCostsTheStoreNoMoreThanAnyBadKey() async throws {
        let fixture = try await Fixture()
        let realID = try #require(TenantKeys.keyID(of: fixture.tenantKey))
        let wrongSecret = "prk_\(realID)_" + String(repeating: "B", count: 43)
        let badToken = "pro_0123456789abcdef_" + String(repeating: "C", count: 43)
        try await fixture.application.test(.live) { client in
            // Malformed keys are refused without the store: first counted, then answered 429.
            for index in 0..<(AuthenticationFailures.burst + 50) {
                let response = try await client.post("/v1/push", key: "junk-\(index)", json: Self.push)
                #expect(response.status == (index < AuthenticationFailures.burst ? .unauthorized : .tooManyRequests))
            }
            #expect(try await client.admin(.get, "/admin/v1/tenants", token: "pro_x").status == .tooManyRequests)
            #expect(fixture.store.lookups == (0, 0, 0))

            // The same unknown key id, or a wrong secret for a real key id, again and again: one lookup each, for
            // the cache's 5 s; never a tenant read.
            for _ in 0..<50 {
                #expect(
                    try await client.post("/v1/push", key: Self.unknownKey(7), json: Self.push).status
                        == .tooManyRequests)
                #expect(try await client.post("/v1/push", key: wrongSecret, json: Self.push).status == .tooManyRequests)
            }
            #expect(fixture.store.lookups == (2, 0, 0))

            // New key ids every request: one indexed lookup each, never more (the relay does not skip it, which
            // would lock out a valid key whose record is not cached).
            for index in 100..<300 {
                #expect(
                    try await client.post("/v1/push", key: Self.unknownKey(index), json: Self.push).status
                        == .tooManyRequests)
            }
            #expect(fixture.store.lookups == (202, 0, 0))
            // Operator tokens are not cached: a well-formed one is looked up each time, as from any address.
            for _ in 0..<10 {
                #expect(try await client.admin(.get, "/admin/v1/tenants", token: badToken).status == .tooManyRequests)
            }
            #expect(fixture.store.lookups == (202, 0, 10))

            // The valid key costs its one key lookup (its record was cached by the wrong secret's) and one tenant read.
            #expect(try await client.post("/v1/push", key: fixture.tenantKey, json: Self.push).status == .ok)
            #expect(fixture.store.lookups.tenants == 1)
            #expect(fixture.store.lookups.keys == 202)

            // Time earns failures back at the usual rate, valid requests or not: one every 6 s.
            fixture.clock.advance(by: .seconds(6))
            #expect(try await client.post("/v1/push", key: "junk", json: Self.push).status == .unauthorized)
            #expect(try await client.post("/v1/push", key: "junk", json: Self.push).status == .tooManyRequests)
        }
    }
}
