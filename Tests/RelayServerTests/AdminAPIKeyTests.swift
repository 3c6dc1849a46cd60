import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

@Suite(.timeLimit(.minutes(1)))
struct AdminAPIKeyTests {
    @Test func issueRotateAndRevokeKeys() async throws {
        let fixture = try await AdminFixture()
        let keysURI = "/admin/v1/tenants/acme/keys"
        try await fixture.application.test(.router) { client in
            // Issued: shown once, with its id; it works at once.
            let issued = try await client.admin(
                .post, keysURI, token: fixture.adminToken, json: #"{"expiresInDays":30}"#)
            #expect(issued.status == .created)
            let key = try #require(issued.json?["key"]?.stringValue)
            let keyID = try #require(issued.json?["id"]?.stringValue)
            #expect(key.hasPrefix("prk_\(keyID)_"))
            #expect(issued.json?["active"] == .bool(true))
            #expect(issued.json?["tenant"] == .string(fixture.tenant.id))
            #expect(issued.json?["expiresAt"]?.stringValue != nil)
            #expect(try await client.post("/v1/push", key: key, json: AdminFixture.pushBody).status == .ok)

            // Listed without secrets.
            let listed = try await client.admin(.get, keysURI, token: fixture.auditorToken)
            let keys = listed.json?["data"]?.elements ?? []
            #expect(Set(keys.compactMap { $0["id"]?.stringValue }) == [fixture.tenantKeyID, keyID])
            #expect(keys.allSatisfy { $0["key"] == nil && $0["secretHash"] == nil })
            #expect(!listed.text.contains(String(key.dropFirst(21))))

            // Rotation: a new key, and the old one keeps working for the overlap.
            let rotated = try await client.admin(
                .post, "\(keysURI)/\(fixture.tenantKeyID)/rotate", token: fixture.adminToken,
                json: #"{"overlapDays":2}"#
            )
            #expect(rotated.status == .created)
            let newKey = try #require(rotated.json?["key"]?.stringValue)
            #expect(rotated.json?["replaces"]?["id"] == .string(fixture.tenantKeyID))
            #expect(rotated.json?["replaces"]?["active"] == .bool(true))
            let oldRecord = try #require(try await fixture.store.key(id: fixture.tenantKeyID))
            let overlapEnd = try #require(oldRecord.expiresAt)
            #expect(abs(overlapEnd.timeIntervalSinceNow - 2 * 86_400) < 60)
            fixture.passAuthenticatorCache()
            #expect(
                try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody).status == .ok)
            #expect(try await client.post("/v1/push", key: newKey, json: AdminFixture.pushBody).status == .ok)
            let defaultOverlap = try await client.admin(.post, "\(keysURI)/\(keyID)/rotate", token: fixture.adminToken)
            #expect(defaultOverlap.status == .created)
            let keyRecord = try #require(try await fixture.store.key(id: keyID))
            #expect(abs((keyRecord.expiresAt ?? .distantPast).timeIntervalSinceNow - KeyLifecycle.defaultOverlap) < 60)

            // Revocation: refused within the authenticator's cache lifetime.
            let revoked = try await client.admin(
                .delete, "\(keysURI)/\(fixture.tenantKeyID)", token: fixture.adminToken)
            #expect(revoked.status == .ok)
            #expect(revoked.json?["active"] == .bool(false))
            #expect(revoked.json?["revokedAt"]?.stringValue != nil)
            fixture.passAuthenticatorCache()
            let refused = try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody)
            #expect(refused.status == .unauthorized)
            #expect(try await client.post("/v1/push", key: newKey, json: AdminFixture.pushBody).status == .ok)

            // A revoked key cannot be rotated; unknown keys and other tenants' keys are not found.
            let rotateRevoked = try await client.admin(
                .post, "\(keysURI)/\(fixture.tenantKeyID)/rotate", token: fixture.adminToken)
            #expect(rotateRevoked.status == .conflict)
            #expect(
                try await client.admin(.delete, "\(keysURI)/0123456789abcdef", token: fixture.adminToken).status
                    == .notFound)
            let (_, otherKey) = try await TestRelay.addTenant(to: fixture.store, name: "other")
            let otherID = try #require(TenantKeys.keyID(of: otherKey))
            let foreign = try await client.admin(.delete, "\(keysURI)/\(otherID)", token: fixture.adminToken)
            #expect(foreign.status == .notFound)
            #expect(try await fixture.store.key(id: otherID)?.revokedAt == nil)

            // Bodies.
            let badExpiry = try await client.admin(
                .post, keysURI, token: fixture.adminToken, json: #"{"expiresInDays":0}"#)
            #expect(badExpiry.errorPaths == ["expiresInDays"])
            let badOverlap = try await client.admin(
                .post, "\(keysURI)/\(keyID)/rotate", token: fixture.adminToken, json: #"{"overlap":1}"#)
            #expect(badOverlap.errorPaths == ["overlap"])
        }
    }

    @Test func atMostFiveActiveKeys() async throws {
        let fixture = try await AdminFixture()
        let keysURI = "/admin/v1/tenants/\(fixture.tenant.id)/keys"
        try await fixture.application.test(.router) { client in
            var ids: [String] = []
            for _ in 1..<KeyLifecycle.maxActiveKeys {
                let issued = try await client.admin(.post, keysURI, token: fixture.adminToken)
                #expect(issued.status == .created)
                ids.append(issued.json?["id"]?.stringValue ?? "")
            }
            let sixth = try await client.admin(.post, keysURI, token: fixture.adminToken)
            #expect(sixth.status == .conflict)
            #expect(sixth.errorCode == "CONFLICT")
            let message = sixth.json?["errors"]?[0]?["message"]?.stringValue ?? ""
            #expect(message.contains("5 active keys"))
            #expect(message.contains("revoke or rotate"))
            #expect(try await fixture.store.keys(tenantID: fixture.tenant.id).count == 5)

            // Rotation still works at the cap; revoking one makes room.
            let rotated = try await client.admin(.post, "\(keysURI)/\(ids[0])/rotate", token: fixture.adminToken)
            #expect(rotated.status == .created)
            #expect(try await client.admin(.delete, "\(keysURI)/\(ids[1])", token: fixture.adminToken).status == .ok)
            #expect(try await client.admin(.post, keysURI, token: fixture.adminToken).status == .conflict)
            #expect(try await client.admin(.delete, "\(keysURI)/\(ids[2])", token: fixture.adminToken).status == .ok)
            #expect(try await client.admin(.post, keysURI, token: fixture.adminToken).status == .created)
        }
    }
}
