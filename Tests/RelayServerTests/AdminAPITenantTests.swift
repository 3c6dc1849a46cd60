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
struct AdminAPITenantTests {
    @Test func createShowAndUpdateTenants() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let body = #"""
                {"name":"beta","rate":5,"burst":20,"dailyQuota":1000,"perDevicePerMinute":10,"allowCriticalAlerts":true,
                 "allowedProviders":["fcm","apns"],"criticalChannel":"oncall","note":"ticket 42",
                 "criticalReservePerHour":30}
                """#
            let created = try await client.admin(.post, "/admin/v1/tenants", token: fixture.adminToken, json: body)
            #expect(created.status == .created)
            let tenant = try #require(created.json)
            let id = try #require(tenant["id"]?.stringValue)
            #expect(tenant["name"] == .string("beta"))
            #expect(tenant["rate"] == .int(5))
            #expect(tenant["burst"] == .int(20))
            #expect(tenant["dailyQuota"] == .int(1000))
            #expect(tenant["perDevicePerMinute"] == .int(10))
            #expect(tenant["criticalReservePerHour"] == .int(30))
            #expect(tenant["allowCriticalAlerts"] == .bool(true))
            #expect(tenant["allowedProviders"] == .array([.string("apns"), .string("fcm")]))
            #expect(tenant["criticalChannel"] == .string("oncall"))
            #expect(tenant["note"] == .string("ticket 42"))
            #expect(tenant["disabled"] == .bool(false))
            #expect(tenant["deletedAt"] == .null)
            let stored = try #require(try await fixture.store.tenant(id: id))
            #expect(
                stored.limits
                    == RateLimits(
                        ratePerSecond: 5, burst: 20, dailyQuota: 1000, perDevicePerMinute: 10,
                        criticalReservePerHour: 30))
            #expect(stored.allowedProviders == [.apns, .fcm])

            // Defaults for what is left out; names are unique.
            let plain = try await client.admin(
                .post, "/admin/v1/tenants", token: fixture.adminToken, json: #"{"name":"gamma"}"#)
            #expect(plain.status == .created)
            #expect(plain.json?["burst"] == .int(Int64(RateLimits().burst)))
            #expect(plain.json?["criticalReservePerHour"] == .int(Int64(RateLimits().criticalReservePerHour)))
            #expect(plain.json?["allowedProviders"] == .null)
            let taken = try await client.admin(
                .post, "/admin/v1/tenants", token: fixture.adminToken, json: #"{"name":"beta"}"#)
            #expect(taken.status == .conflict)
            #expect(taken.errorCode == "CONFLICT")

            // By id or by name.
            let byName = try await client.admin(.get, "/admin/v1/tenants/beta", token: fixture.auditorToken)
            #expect(byName.json?["id"] == .string(id))
            let byID = try await client.admin(.get, "/admin/v1/tenants/\(id)", token: fixture.auditorToken)
            #expect(byID.json == byName.json)
            let spaced = try await client.admin(
                .post, "/admin/v1/tenants", token: fixture.adminToken, json: #"{"name":"big corp"}"#)
            #expect(spaced.status == .created)
            #expect(
                try await client.admin(.get, "/admin/v1/tenants/big%20corp", token: fixture.adminToken).status == .ok)

            // PATCH: any subset; null clears what may be absent.
            let patched = try await client.admin(
                .patch, "/admin/v1/tenants/beta", token: fixture.adminToken,
                json:
                    #"{"burst":50,"allowedProviders":null,"note":null,"name":"beta-2","disabled":true,"criticalReservePerHour":0}"#
            )
            #expect(patched.status == .ok)
            #expect(patched.json?["burst"] == .int(50))
            #expect(patched.json?["criticalReservePerHour"] == .int(0))
            #expect(patched.json?["rate"] == .int(5))
            #expect(patched.json?["allowedProviders"] == .null)
            #expect(patched.json?["note"] == .null)
            #expect(patched.json?["criticalChannel"] == .string("oncall"))
            #expect(patched.json?["name"] == .string("beta-2"))
            #expect(patched.json?["disabled"] == .bool(true))
            let renamedOnto = try await client.admin(
                .patch, "/admin/v1/tenants/beta-2", token: fixture.adminToken, json: #"{"name":"acme"}"#)
            #expect(renamedOnto.status == .conflict)

            let list = try await client.admin(.get, "/admin/v1/tenants", token: fixture.auditorToken)
            #expect(
                Set(list.json?["data"]?.elements.compactMap { $0["name"]?.stringValue } ?? []) == [
                    "acme", "beta-2", "gamma", "big corp",
                ])

            let missing = try await client.admin(.get, "/admin/v1/tenants/nobody", token: fixture.adminToken)
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "NOT_FOUND")
            #expect(
                try await client.admin(.patch, "/admin/v1/tenants/nobody", token: fixture.adminToken, json: "{}").status
                    == .notFound)
            #expect(
                try await client.admin(.delete, "/admin/v1/tenants/nobody", token: fixture.adminToken).status
                    == .notFound)
        }
    }

    @Test func invalidTenantBodiesNameEveryField() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let bad = try await client.admin(
                .post, "/admin/v1/tenants", token: fixture.adminToken,
                json:
                    #"{"name":" ","rate":-1,"burst":1.5,"dailyQuota":"many","perDevicePerMinute":0,"criticalReservePerHour":-1,"allowCriticalAlerts":"yes","allowedProviders":["apns","pigeon"],"criticalChannel":"","note":5,"colour":1,"disabled":true}"#
            )
            #expect(bad.status == .badRequest)
            #expect(bad.errorCode == "VALIDATION_ERROR")
            #expect(
                bad.errorPaths == [
                    "name", "rate", "burst", "dailyQuota", "perDevicePerMinute", "criticalReservePerHour",
                    "allowCriticalAlerts", "allowedProviders[1]",
                    "criticalChannel", "note", "colour", "disabled",
                ]
            )
            let typo = try await client.admin(
                .post, "/admin/v1/tenants", token: fixture.adminToken, json: #"{"name":"x","brust":3}"#)
            #expect(typo.json?["errors"]?[0]?["message"] == .string("unknown field 'brust'; did you mean 'burst'?"))
            let noName = try await client.admin(.post, "/admin/v1/tenants", token: fixture.adminToken, json: "{}")
            #expect(noName.errorPaths == ["name"])
            let empty = try await client.admin(
                .patch, "/admin/v1/tenants/acme", token: fixture.adminToken,
                json: #"{"allowedProviders":[],"name":null}"#
            )
            #expect(empty.errorPaths == ["allowedProviders", "name"])
            let notObject = try await client.admin(.post, "/admin/v1/tenants", token: fixture.adminToken, json: "[]")
            #expect(notObject.status == .badRequest)
            let notJSON = try await client.execute(
                uri: "/admin/v1/tenants", method: .post,
                headers: [.authorization: "Bearer \(fixture.adminToken)", .contentType: "text/plain"],
                body: ByteBuffer(string: "name=x")
            )
            #expect(notJSON.status == .unsupportedMediaType)
            #expect(try await fixture.store.tenants().count == 1)
        }
    }

    @Test func disableEnableAndDeleteReachTheTenantsPushes() async throws {
        let fixture = try await AdminFixture()
        let tenantURI = "/admin/v1/tenants/\(fixture.tenant.id)"
        try await fixture.application.test(.router) { client in
            // Cached by the authenticator from here on.
            #expect(
                try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody).status == .ok)

            let disabled = try await client.admin(.post, tenantURI + "/disable", token: fixture.adminToken)
            #expect(disabled.status == .ok)
            #expect(disabled.json?["disabled"] == .bool(true))
            fixture.passAuthenticatorCache()
            let refused = try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody)
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "TENANT_DISABLED")

            let enabled = try await client.admin(.post, tenantURI + "/enable", token: fixture.adminToken)
            #expect(enabled.json?["disabled"] == .bool(false))
            fixture.passAuthenticatorCache()
            #expect(
                try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody).status == .ok)

            let deleted = try await client.admin(.delete, "/admin/v1/tenants/acme", token: fixture.adminToken)
            #expect(deleted.status == .ok)
            let deletedAt = try #require(deleted.json?["deletedAt"]?.stringValue)
            fixture.passAuthenticatorCache()
            let gone = try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody)
            #expect(gone.status == .forbidden)
            #expect(gone.errorCode == "TENANT_DISABLED")

            // Listed only on request; still shown by id and name; no longer changeable; deleting again changes nothing.
            let listed = try await client.admin(.get, "/admin/v1/tenants", token: fixture.auditorToken)
            #expect(listed.json?["data"]?.elements.isEmpty == true)
            let all = try await client.admin(.get, "/admin/v1/tenants?includeDeleted=true", token: fixture.auditorToken)
            #expect(all.json?["data"]?[0]?["deletedAt"] == .string(deletedAt))
            #expect(
                try await client.admin(.get, tenantURI, token: fixture.auditorToken).json?["deletedAt"]
                    == .string(deletedAt))
            let patch = try await client.admin(.patch, tenantURI, token: fixture.adminToken, json: #"{"note":"x"}"#)
            #expect(patch.status == .conflict)
            #expect(try await client.admin(.post, tenantURI + "/enable", token: fixture.adminToken).status == .conflict)
            #expect(try await client.admin(.post, tenantURI + "/keys", token: fixture.adminToken).status == .conflict)
            let again = try await client.admin(.delete, tenantURI, token: fixture.adminToken)
            #expect(again.json?["deletedAt"] == .string(deletedAt))
            // The name stays taken.
            let reuse = try await client.admin(
                .post, "/admin/v1/tenants", token: fixture.adminToken, json: #"{"name":"acme"}"#)
            #expect(reuse.status == .conflict)
            let bad = try await client.admin(.get, "/admin/v1/tenants?includeDeleted=yes", token: fixture.adminToken)
            #expect(bad.errorPaths == ["includeDeleted"])
        }
    }
}
