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
struct AdminAPIReportTests {
    @Test func usageCountsEachProvidersOutcomes() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let body = #"""
                {"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.deadAPNsToken)","\#(TestRelay.fcmToken)"],"body":"b"},
                 {"to":"\#(TestRelay.expoToken)","body":"critical","isCriticalAlert":true},
                 {"to":"\#(TestRelay.expoTicketToken("usage"))","body":"accepted by Expo, receipt to come"}]}
                """#
            #expect(try await client.post("/v1/push", key: fixture.tenantKey, json: body).status == .ok)

            let usage = try await client.admin(.get, "/admin/v1/tenants/acme/usage", token: fixture.auditorToken)
            #expect(usage.status == .ok)
            #expect(usage.json?["tenant"] == .string(fixture.tenant.id))
            let days = usage.json?["days"]?.elements ?? []
            #expect(days.count == 1)
            #expect(days.first?["day"] == .string(UsageKey.day(of: Date())))
            let providers = try #require(days.first?["providers"])
            let counts: (Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> JSONValue = {
                delivered, invalid, rejected, limited, failed, accepted, critical in
                .object([
                    "delivered": .int(delivered), "tokenInvalid": .int(invalid), "rejected": .int(rejected),
                    "rateLimited": .int(limited), "failed": .int(failed), "accepted": .int(accepted),
                    "critical": .int(critical),
                ])
            }
            #expect(providers["apns"] == counts(1, 1, 0, 0, 0, 0, 0))
            #expect(providers["fcm"] == counts(1, 0, 0, 0, 0, 0, 0))
            // The critical alert from a tenant not allowed to send them (a critical notification all the same,
            // refused), and a push whose Expo receipt is to come.
            #expect(providers["expo"] == counts(0, 0, 1, 0, 0, 1, 1))

            let week = try await client.admin(.get, "/admin/v1/tenants/acme/usage?days=1", token: fixture.adminToken)
            #expect(week.json?["days"]?.elements.count == 1)
            for bad in ["days=0", "days=367", "days=x", "day=3", "days=1&days=2"] {
                let refused = try await client.admin(
                    .get, "/admin/v1/tenants/acme/usage?\(bad)", token: fixture.adminToken)
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(refused.errorCode == "VALIDATION_ERROR")
            }
            let other = try await client.admin(
                .post, "/admin/v1/tenants", token: fixture.adminToken, json: #"{"name":"quiet"}"#)
            let quietID = try #require(other.json?["id"]?.stringValue)
            let quiet = try await client.admin(.get, "/admin/v1/tenants/quiet/usage", token: fixture.adminToken)
            #expect(quiet.json == .object(["tenant": .string(quietID), "days": .array([])]))
        }
    }

    @Test func auditPagesFollowTheCursorAndFilter() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            // A millisecond of margin: record times are rounded to the nearest millisecond.
            let start = Date().addingTimeInterval(-0.001)
            for name in ["t1", "t2", "t3", "t4", "t5"] {
                let created = try await client.admin(
                    .post, "/admin/v1/tenants", token: fixture.adminToken, json: #"{"name":"\#(name)"}"#)
                #expect(created.status == .created)
            }
            #expect(
                try await client.admin(.post, "/admin/v1/tenants/t2/disable", token: fixture.adminToken).status == .ok)
            let critical = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x","isCriticalAlert":true}]}"#
            #expect(try await client.post("/v1/push", key: fixture.tenantKey, json: critical).status == .ok)
            #expect(
                try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody).status == .ok)

            // Two at a time through every admin record, in order, each once.
            var seen: [JSONValue] = []
            var uri = "/admin/v1/audit?event=admin&limit=2"
            var pages = 0
            while true {
                let page = try await client.admin(.get, uri, token: fixture.auditorToken)
                #expect(page.status == .ok)
                let data = page.json?["data"]?.elements ?? []
                #expect(data.count <= 2)
                seen += data
                pages += 1
                guard case .string(let cursor)? = page.json?["nextCursor"] else {
                    #expect(page.json?["nextCursor"] == .null)
                    break
                }
                uri = "/admin/v1/audit?event=admin&limit=2&cursor=\(cursor)"
                if pages > 10 { break }
            }
            #expect(seen.count == 6)
            #expect(
                seen.compactMap { $0["outcome"]?.stringValue } == Array(repeating: "tenant.create", count: 5) + [
                    "tenant.disable"
                ])
            #expect(Set(seen.compactMap { $0["seq"]?.integerValue }).count == 6)
            #expect(seen.allSatisfy { $0["event"] == .string("admin") && $0["actor"] == .string("operator:alice") })
            // The renderer's shape: ISO time, chain, seq and link.
            let first = try #require(seen.first)
            #expect(first["time"]?.stringValue?.hasSuffix("Z") == true)
            #expect(first["chain"]?.stringValue != nil)
            #expect(first["link"]?.stringValue?.count == 64)
            #expect(first["requestID"]?.stringValue != nil)

            // Filters: a tenant by name, an outcome, criticality, a time range.
            let t2 = try await client.admin(.get, "/admin/v1/audit?tenant=t2", token: fixture.adminToken)
            #expect(
                t2.json?["data"]?.elements.compactMap { $0["outcome"]?.stringValue } == [
                    "tenant.create", "tenant.disable",
                ])
            let disables = try await client.admin(
                .get, "/admin/v1/audit?outcome=tenant.disable", token: fixture.adminToken)
            #expect(disables.json?["data"]?.elements.count == 1)
            let criticalPushes = try await client.admin(
                .get, "/admin/v1/audit?event=push&critical=true", token: fixture.adminToken)
            #expect(
                criticalPushes.json?["data"]?.elements.map { $0["outcome"] } == [.string("CriticalAlertsNotAllowed")])
            let ordinary = try await client.admin(
                .get, "/admin/v1/audit?critical=false&tenant=\(fixture.tenant.id)", token: fixture.adminToken
            )
            #expect(ordinary.json?["data"]?.elements.map { $0["outcome"] } == [.string("ok")])
            let since = AuditTime.iso8601(millis: AuditTime.millis(start))
            let recent = try await client.admin(
                .get, "/admin/v1/audit?event=admin&since=\(since)", token: fixture.adminToken)
            #expect(recent.json?["data"]?.elements.count == 6)
            let future = try await client.admin(.get, "/admin/v1/audit?since=2999-01-01", token: fixture.adminToken)
            #expect(future.json == .object(["data": .array([]), "nextCursor": .null]))
            let past = try await client.admin(
                .get, "/admin/v1/audit?event=admin&until=\(since)", token: fixture.adminToken)
            #expect(past.json?["data"]?.elements.isEmpty == true)
        }
    }

    @Test(arguments: [
        ("limit=0", "limit"), ("limit=1001", "limit"), ("cursor=abc", "cursor"), ("cursor=-3", "cursor"),
        ("since=yesterday", "since"), ("until=2027-13-01", "until"), ("critical=maybe", "critical"),
        ("event=login", "event"), ("tenantID=x", "tenantID"), ("since=2027-02-01&until=2027-01-01", "until"),
    ])
    func badAuditParametersAreNamed(_ query: String, _ parameter: String) async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let response = try await client.admin(.get, "/admin/v1/audit?\(query)", token: fixture.auditorToken)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "VALIDATION_ERROR")
            #expect(response.errorPaths == [parameter])
        }
    }

    @Test func adminRecordsCarryBeforeAndAfterWithoutSecrets() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let keysURI = "/admin/v1/tenants/acme/keys"
            let patched = try await client.admin(
                .patch, "/admin/v1/tenants/acme", token: fixture.adminToken, json: #"{"burst":7,"note":"n"}"#)
            #expect(patched.status == .ok)
            let issued = try await client.admin(.post, keysURI, token: fixture.adminToken)
            let issuedKey = try #require(issued.json?["key"]?.stringValue)
            let issuedID = try #require(issued.json?["id"]?.stringValue)
            let rotated = try await client.admin(.post, "\(keysURI)/\(issuedID)/rotate", token: fixture.adminToken)
            let rotatedKey = try #require(rotated.json?["key"]?.stringValue)
            let rotatedID = try #require(rotated.json?["id"]?.stringValue)
            #expect(try await client.admin(.delete, "\(keysURI)/\(rotatedID)", token: fixture.adminToken).status == .ok)
            #expect(try await client.admin(.delete, "/admin/v1/tenants/acme", token: fixture.adminToken).status == .ok)

            let page = try await client.admin(.get, "/admin/v1/audit?event=admin", token: fixture.auditorToken)
            let records = page.json?["data"]?.elements ?? []
            #expect(
                records.compactMap { $0["outcome"]?.stringValue } == [
                    "tenant.update", "key.issue", "key.rotate", "key.issue", "key.revoke", "tenant.delete",
                ])
            #expect(
                records.allSatisfy {
                    $0["actor"] == .string("operator:alice") && $0["tenantID"] == .string(fixture.tenant.id)
                })

            let update = records[0]
            #expect(update["before"]?["limits"]?["burst"] == .int(Int64(RateLimits().burst)))
            #expect(update["after"]?["limits"]?["burst"] == .int(7))
            #expect(update["after"]?["note"] == .string("n"))
            #expect(records[1]["keyID"] == .string(issuedID))
            #expect(records[1]["before"] == nil)
            #expect(records[1]["after"]?["id"] == .string(issuedID))
            #expect(records[2]["keyID"] == .string(issuedID))
            #expect(records[2]["before"]?["expiresAt"] == nil)
            #expect(records[2]["after"]?["expiresAt"]?.stringValue != nil)
            #expect(records[3]["keyID"] == .string(rotatedID))
            #expect(records[4]["before"]?["revokedAt"] == nil)
            #expect(records[4]["after"]?["revokedAt"]?.stringValue != nil)
            #expect(records[5]["before"]?["deletedAt"] == nil)
            #expect(records[5]["after"]?["deletedAt"]?.stringValue != nil)

            // Neither the keys, their secrets nor the secrets' hashes appear anywhere in the log.
            for key in [issuedKey, rotatedKey] {
                let secret = String(key.dropFirst(21))
                #expect(!page.text.contains(secret))
                #expect(!page.text.contains(AuditHex.encode(TenantKeys.hash(secret: secret))))
            }
            #expect(!page.text.contains("secretHash"))
        }
    }
}
