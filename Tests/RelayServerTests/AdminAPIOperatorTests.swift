import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// `/admin/v1/operators` and `GET /admin/v1/keys/{keyID}`: operators listed, created and revoked over HTTP, each
/// change in the audit log; a key id leads to its tenant.
@Suite(.timeLimit(.minutes(1)))
struct AdminAPIOperatorTests {
    @Test func operatorsAreCreatedListedAndRevokedOverHTTP() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let created = try await client.admin(
                .post, "/admin/v1/operators", token: fixture.adminToken, json: #"{"name":"dave","role":"auditor"}"#)
            #expect(created.status == .created, "\(created.text)")
            let token = try #require(created.json?["token"]?.stringValue)
            #expect(created.json?["role"] == .string("auditor"))

            // The new token works, with its role.
            let listed = try await client.admin(.get, "/admin/v1/operators", token: token)
            #expect(listed.status == .ok)
            let names = listed.json?["data"]?.elements.compactMap { $0["name"]?.stringValue } ?? []
            #expect(names.contains("dave") && names.contains("alice"))
            #expect(!listed.text.contains("secretHash") && !listed.text.contains("pro_"), "never a token or hash")

            let taken = try await client.admin(
                .post, "/admin/v1/operators", token: fixture.adminToken, json: #"{"name":"dave","role":"admin"}"#)
            #expect(taken.status == .conflict)
            let badRole = try await client.admin(
                .post, "/admin/v1/operators", token: fixture.adminToken, json: #"{"name":"erin","role":"root"}"#)
            #expect(badRole.status == .badRequest)
            #expect(badRole.errorPaths == ["role"])

            let revoked = try await client.admin(.delete, "/admin/v1/operators/dave", token: fixture.adminToken)
            #expect(revoked.status == .ok)
            #expect(revoked.json?["active"] == .bool(false))
            let unknown = try await client.admin(.delete, "/admin/v1/operators/zed", token: fixture.adminToken)
            #expect(unknown.status == .notFound)
            fixture.passAuthenticatorCache()
            let refused = try await client.admin(.get, "/admin/v1/operators", token: token)
            #expect(refused.status == .unauthorized, "a revoked token no longer works")
        }
        let records = try await fixture.store.auditRecords(
            chain: fixture.relay.commits.settings.chain, after: 0, limit: 50
        )
        .map(\.record).filter { $0.outcome?.hasPrefix("operator.") == true }
        #expect(records.map(\.outcome) == ["operator.create", "operator.revoke"])
        #expect(records.allSatisfy { $0.actor == "operator:alice" })
    }

    @Test func aKeyIDLeadsToItsTenant() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let found = try await client.admin(
                .get, "/admin/v1/keys/\(fixture.tenantKeyID)", token: fixture.auditorToken)
            #expect(found.status == .ok, "\(found.text)")
            #expect(found.json?["tenant"] == .string(fixture.tenant.id))
            #expect(found.json?["tenantName"] == .string("acme"))
            #expect(!found.text.contains(fixture.tenantKey), "never the key's secret")
            let missing = try await client.admin(.get, "/admin/v1/keys/0123456789abcdef", token: fixture.adminToken)
            #expect(missing.status == .notFound)
        }
    }
}
