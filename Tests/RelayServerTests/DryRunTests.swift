import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Dry runs over scripted senders: what the answer says, that nothing is sent, admitted, counted or stored but one
/// audit record, and the lookup budget. The upstream requests themselves are checked against the golden files with
/// real senders and the provider simulator (`DryRunUpstreamTests`).
@Suite(.timeLimit(.minutes(1)))
struct DryRunTests {
    static let criticalAPNs = "cc" + String(repeating: "ab", count: 31)

    /// A critical alert the tenant may not send, a plain APNs push, an Expo push the relay has no sender for, and
    /// an FCM push.
    static let mixed =
        #"[{"to":"\#(criticalAPNs)","title":"Page","isCriticalAlert":true},{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.expoToken)","\#(TestRelay.fcmToken)"],"title":"t","body":"b"}]"#

    @Test(arguments: [true, false])
    func aDryRunAnswersEachNotificationAndSendsCountsAndStoresNothing(byHeader: Bool) async throws {
        let relay = try await TestRelay(providers: [.apns, .fcm], allowCriticalAlerts: false)
        let body = byHeader ? #"{"messages":\#(Self.mixed)}"# : #"{"dryRun":true,"messages":\#(Self.mixed)}"#
        let headers: HTTPFields = byHeader ? [HTTPField.Name("Prefer")!: "respond-async, Dry-Run"] : [:]
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body, headers: headers)
            #expect(response.status == .ok)
            #expect(response.headers[HTTPField.Name("Preference-Applied")!] == (byHeader ? "dry-run" : nil))
            #expect(response.headers[HTTPField.Name("RateLimit-Remaining")!] == nil, "the bucket is not asked")
            #expect(response.json?["dryRun"] == .bool(true))
            let data = try #require(response.json?["data"])
            #expect(data[0]?["status"] == .string("error"))
            #expect(data[0]?["provider"] == .string("apns"))
            #expect(data[0]?["critical"] == .bool(true))
            #expect(data[0]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
            #expect(data[0]?["upstream"] == nil)
            #expect(data[0]?["id"] == nil, "a dry run makes no receipt")
            #expect(data[1]?["status"] == .string("pending"))
            #expect(data[1]?["message"] == .string(DryRunAPI.wouldBeSent))
            #expect(data[1]?["app"] == .string("default"))
            #expect(data[1]?["critical"] == .bool(false))
            #expect(data[2]?["details"]?["error"] == .string("ProviderNotConfigured"))
            #expect(data[2]?["provider"] == .string("expo"))
            #expect(data[3]?["status"] == .string("pending"))
            #expect(data[3]?["provider"] == .string("fcm"))
            #expect(data[4] == nil)
        }
        #expect(relay.sentCount == 0)
        #expect(try await relay.store.usage(tenantID: relay.tenant.id, fromDay: "2000-01-01").isEmpty)
        #expect(try await relay.store.journalStatistics().entries == 0)
        #expect(try await relay.store.pruneReceipts(now: .distantFuture) == 0, "no receipt was stored")

        // One audit record: who asked and the counts, never a token.
        let records = try await relay.store.auditRecords(chain: relay.relay.commits.settings.chain, after: 0, limit: 10)
        #expect(records.map(\.record.event) == [.dryRun])
        let record = try #require(records.first?.record)
        #expect(record.tenantID == relay.tenant.id)
        #expect(record.keyID == TenantKeys.parse(relay.key)?.id)
        #expect(record.requestID != nil)
        #expect(record.tokenFingerprint == nil && record.provider == nil && record.critical == nil)
        #expect(
            record.detail
                == "would send 2 of 4 (apns 2, expo 1, fcm 1); refused: CriticalAlertsNotAllowed 1, ProviderNotConfigured 1; critical: 1"
        )
    }

    @Test func theDeviceAllowanceAndTheBucketAreNeitherSpentNorAsked() async throws {
        // One notification a minute per device, a burst of 1: a dry run of 3 to one token is answered, and a push
        // after many dry runs still goes.
        let limits = RateLimits(ratePerSecond: 1, burst: 1, dailyQuota: 1, perDevicePerMinute: 1)
        let clock = ManualClock()
        let relay = try await TestRelay(limits: limits, clock: .manual(clock))
        let token = TestRelay.apnsToken
        try await relay.application.test(.router) { client in
            for _ in 0..<5 {
                let dry = try await client.post(
                    "/v1/push", key: relay.key,
                    json: #"{"dryRun":true,"messages":[{"to":["\#(token)","\#(token)","\#(token)"],"body":"b"}]}"#)
                #expect(dry.json?["data"]?[2]?["status"] == .string("pending"))
            }
            let push = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(token)","body":"b"}]}"#)
            #expect(push.status == .ok)
            #expect(push.json?["data"]?[0]?["status"] == .string("ok"))
            let again = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(token)","body":"b"}]}"#)
            #expect(again.status == .tooManyRequests, "the limits hold for pushes")
        }
        #expect(relay.sentCount == 1)
    }

    @Test func validationFailuresAreRefusedAsForAPush() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let notBoolean = try await client.post(
                "/v1/push", key: relay.key, json: #"{"dryRun":"yes","messages":[{"to":"\#(TestRelay.apnsToken)"}]}"#)
            #expect(notBoolean.status == .badRequest)
            #expect(notBoolean.object["errors"]?[0]?["path"] == .string("dryRun"))
            let typo = try await client.post(
                "/v1/push", key: relay.key, json: #"{"dryrun":true,"messages":[{"to":"\#(TestRelay.apnsToken)"}]}"#)
            #expect(typo.status == .badRequest)
            #expect(typo.object["errors"]?[0]?["message"] == .string("unknown field 'dryrun'; did you mean 'dryRun'?"))
            let invalid = try await client.post(
                "/v1/push", key: relay.key, json: #"{"dryRun":true,"messages":[{"to":"nope","title":"t"}]}"#)
            #expect(invalid.status == .badRequest)
            #expect(invalid.object["errors"]?[0]?["code"] == .string("VALIDATION_ERROR"))
            let expo = try await client.post(
                "/--/api/v2/push/send", key: relay.key, json: #"[{"to":"nope"}]"#,
                headers: [HTTPField.Name("Prefer")!: "dry-run"])
            #expect(expo.status == .badRequest)
            let unauthenticated = try await client.post(
                "/v1/push", key: nil, json: #"{"dryRun":true,"messages":[{"to":"\#(TestRelay.apnsToken)"}]}"#)
            #expect(unauthenticated.status == .unauthorized)
        }
        #expect(relay.sentCount == 0)
        // Refused requests have their `refused` records; no dry run was answered.
        let records = try await relay.store.auditRecords(chain: relay.relay.commits.settings.chain, after: 0, limit: 10)
        #expect(!records.map(\.record.event).contains(.dryRun))
    }

    @Test func dryRunFalseIsAPush() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key,
                json: #"{"dryRun":false,"messages":[{"to":"\#(TestRelay.apnsToken)","body":"b"}]}"#)
            #expect(response.json?["dryRun"] == nil)
            #expect(response.json?["data"]?[0]?["status"] == .string("ok"))
        }
        #expect(relay.sentCount == 1)
    }

    @Test func dryRunsShareTheReceiptLookupsBudget() async throws {
        let clock = ManualClock()
        let relay = try await TestRelay(clock: .manual(clock))
        let body = #"{"dryRun":true,"messages":[{"to":"\#(TestRelay.apnsToken)","body":"b"}]}"#
        let burst = RateLimiterRegistry.receiptLookups.burst
        try await relay.application.test(.router) { client in
            for _ in 0..<burst {
                let response = try await client.post("/v1/push", key: relay.key, json: body)
                #expect(response.status == .ok)
            }
            let refused = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] == "1")
            #expect(refused.object["errors"]?[0]?["code"] == .string("TOO_MANY_REQUESTS"))
            #expect(refused.object["errors"]?[0]?["message"]?.stringValue?.hasPrefix("Too many dry runs") == true)
            let lookup = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["x"]}"#)
            #expect(lookup.status == .tooManyRequests, "receipt lookups share the budget")
            let expo = try await client.post(
                "/--/api/v2/push/send", key: relay.key, json: #"{"to":"\#(TestRelay.expoToken)","body":"b"}"#,
                headers: [HTTPField.Name("Prefer")!: "dry-run"])
            #expect(expo.status == .tooManyRequests)

            // Sends have a budget of their own.
            let push = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"b"}]}"#)
            #expect(push.status == .ok)

            clock.advance(by: .seconds(1))
            let later = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(later.status == .ok)
        }
        #expect(relay.sentCount == 1)
    }

    @Test func theExpoRouteAnswersExpoTicketsWithoutIDs() async throws {
        let relay = try await TestRelay(providers: [.apns, .fcm])
        try await relay.application.test(.router) { client in
            let single = try await client.post(
                "/--/api/v2/push/send", key: relay.key, json: #"{"to":"\#(TestRelay.apnsToken)","body":"b"}"#,
                headers: [HTTPField.Name("Prefer")!: "dry-run"])
            #expect(single.status == .ok)
            #expect(single.headers[HTTPField.Name("Preference-Applied")!] == "dry-run")
            #expect(single.json?["dryRun"] == .bool(true))
            #expect(single.json?["data"]?["status"] == .string("ok"))
            #expect(single.json?["data"]?["id"] == nil)
            let array = try await client.post(
                "/--/api/v2/push/send", key: relay.key,
                json: #"[{"to":["\#(TestRelay.expoToken)","\#(TestRelay.fcmToken)"],"body":"b"}]"#,
                headers: [HTTPField.Name("Prefer")!: "dry-run"])
            #expect(array.json?["data"]?[0]?["status"] == .string("error"))
            #expect(array.json?["data"]?[0]?["details"]?["error"] == .string("InvalidCredentials"))
            #expect(array.json?["data"]?[1]?["status"] == .string("ok"))
        }
        #expect(relay.sentCount == 0)
    }

    @Test(arguments: [
        ("dry-run", true), ("Dry-Run", true), ("respond-async, dry-run", true), (" dry-run ; x=1", true),
        ("dry-run=0", true), ("dry-runs", false), ("respond-async", false),
    ])
    func thePreferenceIsReadAsRFC7240Says(_ value: String, _ expected: Bool) {
        #expect(RequestPreferences([HTTPField.Name("Prefer")!: value]).dryRun == expected, "\(value)")
    }
}
