import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The audit record of a refused request names the request's id and client, set before routing, and what was known
/// of its caller when it was refused: the key id presented, the tenant once the key is proved good, the operator on
/// `/admin/v1`, and the tenant and key in an admin path. What handlers and middleware learn reaches the record with
/// the error (``AttributedRefusal``), not through a shared mutable context.
@Suite(.timeLimit(.minutes(1)))
struct RefusalAuditTests {
    static func refusals(_ store: any PushStore) async throws -> [AuditRecord] {
        try await store.auditRecords(matching: AuditFilter(event: .refused), after: 0, limit: 100).map(\.record)
    }

    @Test func aRefusedRequestIsRecordedWithItsRequestIDAndClient() async throws {
        let relay = try await TestRelay()
        let wrongSecret = String(relay.key.prefix(21)) + String(repeating: "A", count: 43)
        // Over real sockets, so that the client's address is the connection's.
        try await relay.application.test(.live) { client in
            let response = try await client.post(
                "/v1/push", key: wrongSecret, json: #"{"messages":[]}"#, headers: [.requestID: "refused-1"])
            #expect(response.status == .unauthorized)
            #expect(response.headers[.requestID] == "refused-1")
        }
        let refused = try await Self.refusals(relay.store)
        #expect(refused.count == 1)
        #expect(refused.first?.requestID == "refused-1")
        #expect(refused.first?.client == "127.0.0.1")
        #expect(refused.first?.keyID == TenantKeys.keyID(of: relay.key))
        #expect(refused.first?.tenantID == nil)
    }

    @Test func aGoodKeyOfADisabledTenantIsRecordedWithItsTenant() async throws {
        let relay = try await TestRelay()
        var tenant = relay.tenant
        tenant.disabled = true
        try await relay.store.updateTenant(tenant)
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: #"{"messages":[]}"#)
            #expect(response.status == .forbidden)
        }
        let refused = try await Self.refusals(relay.store)
        #expect(refused.map(\.outcome) == ["TENANT_DISABLED"])
        #expect(refused.first?.keyID == TenantKeys.keyID(of: relay.key))
        #expect(refused.first?.tenantID == relay.tenant.id)
    }

    @Test func refusalsAfterAuthenticationNameTheTenantOnEveryAPI() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let expo = try await client.post("/--/api/v2/push/send", key: relay.key, json: #"{"nope":1}"#)
            #expect(expo.status == .badRequest)
            // OneUptime's own 400, audited by its handler, with the key in the path.
            let oneUptime = try await client.post(
                "/t/\(relay.key)/api/notification/push-relay/send", key: nil, json: #"{"nope":1}"#)
            #expect(oneUptime.status == .badRequest)
            // Too large a body for the relay's limit: thrown by the handler, recorded around it.
            let tooLarge = try await client.post(
                "/v1/push", key: relay.key, json: String(repeating: " ", count: (1 << 20) + 1))
            #expect(tooLarge.status == .contentTooLarge)
        }
        let refused = try await Self.refusals(relay.store)
        #expect(refused.map(\.outcome) == ["VALIDATION_ERROR", "VALIDATION_ERROR", "PAYLOAD_TOO_LARGE"])
        #expect(refused.allSatisfy { $0.tenantID == relay.tenant.id })
        #expect(refused.allSatisfy { $0.keyID == TenantKeys.keyID(of: relay.key) })
        #expect(refused.allSatisfy { $0.actor == nil })
        let text = refused.map { String(decoding: $0.canonicalBytes(), as: UTF8.self) }.joined()
        #expect(!text.contains(relay.key))
    }

    @Test func adminRefusalsNameTheOperatorAndTheTenantAndKeyInThePath() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let tenantURI = "/admin/v1/tenants/\(fixture.tenant.id)"
            let badPatch = try await client.admin(.patch, tenantURI, token: fixture.adminToken, json: #"{"burst":0}"#)
            #expect(badPatch.status == .badRequest)
            let rotate = "\(tenantURI)/keys/\(fixture.tenantKeyID)/rotate"
            let badRotate = try await client.admin(
                .post, rotate, token: fixture.adminToken, json: #"{"overlapDays":-1}"#)
            #expect(badRotate.status == .badRequest)
            // Refused before the path is read: the actor only.
            let forbidden = try await client.admin(.post, "\(tenantURI)/disable", token: fixture.auditorToken)
            #expect(forbidden.status == .forbidden)
        }
        let refused = try await Self.refusals(fixture.store)
        #expect(refused.map(\.outcome) == ["VALIDATION_ERROR", "VALIDATION_ERROR", "FORBIDDEN"])
        #expect(refused.map(\.actor) == ["operator:alice", "operator:alice", "operator:bob"])
        #expect(refused.map(\.tenantID) == [fixture.tenant.id, fixture.tenant.id, nil])
        #expect(refused.map(\.keyID) == [nil, fixture.tenantKeyID, nil])
    }

    @Test func whatIsKnownFurtherInIsKeptAndTheRestIsFilledFromOutside() async throws {
        let inner = RefusalSubject(keyID: "k1")
        let outer = RefusalSubject(tenantID: "t1", keyID: "k0", actor: "operator:alice")
        #expect(inner.filled(from: outer) == RefusalSubject(tenantID: "t1", keyID: "k1", actor: "operator:alice"))
        do {
            _ = try await outer.attributing {
                try await inner.attributing { () async throws -> Int in throw RelayHTTPError.notFound }
            }
            Issue.record("no error")
        } catch let refusal as AttributedRefusal {
            #expect(refusal.subject == RefusalSubject(tenantID: "t1", keyID: "k1", actor: "operator:alice"))
            #expect(refusal.error.entries.first?.code == "NOT_FOUND")
        }
    }
}
