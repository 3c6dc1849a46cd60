import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// `Prefer: respond-async` (RFC 7240) on the native and OneUptime send routes.
@Suite(.timeLimit(.minutes(1)))
struct AsynchronousAcceptanceTests {
    @Test func respondAsyncAnswers202WithPendingTicketsAndTheReceiptsBecomeFinal() async throws {
        let gate = Gate()
        let relay = try await TestRelay(gate: gate)
        let body = #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.fcmToken)"],"body":"x"}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: body, headers: [.prefer: "wait=10, Respond-Async"])
            #expect(response.status == .accepted)
            #expect(response.headers[.preferenceApplied] == "respond-async")
            let data = try #require(response.json?["data"])
            #expect(data[0]?["status"] == .string("pending"))
            #expect(data[1]?["status"] == .string("pending"))
            #expect(try await relay.store.journalStatistics().entries == 2)
            let ids = try [0, 1].map { try #require(data[$0]?["id"]?.stringValue) }

            gate.open()
            await relay.relay.queue.waitUntilIdle()
            let found = try await relay.store.receipts(ids: ids, tenantID: relay.tenant.id)
            #expect(found.map(\.status) == [.ok, .ok])
            #expect(try await relay.store.journalStatistics().entries == 0)

            // OneUptime's route too: 202 with its receipt id.
            let oneUptime = try await client.post(
                "/api/notification/push-relay/send", key: relay.key,
                json: #"{"to":"ExponentPushToken[async-1]","title":"t","body":"b"}"#,
                headers: [.prefer: "respond-async"])
            #expect(oneUptime.status == .accepted)
            #expect(oneUptime.headers[.preferenceApplied] == "respond-async")
            #expect(oneUptime.object["success"] == .bool(true))
            #expect(oneUptime.object["receiptId"]?.stringValue != nil)

            // Without the preference, as before.
            let plain = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(plain.status == .ok)
            #expect(plain.headers[.preferenceApplied] == nil)
        }
    }

    @Test func preferencesAreReadAsRFC7240WritesThem() {
        let cases: [(String, Bool)] = [
            ("respond-async", true), ("Respond-Async", true), ("wait=5, respond-async", true),
            ("respond-async; foo=bar", true), ("handling=strict", false), ("respond-asynchronously", false),
            ("", false),
        ]
        for (value, expected) in cases {
            #expect(RequestPreferences([.prefer: value]).respondAsync == expected, "\(value)")
        }
        var two = HTTPFields()
        two.append(HTTPField(name: .prefer, value: "wait=1"))
        two.append(HTTPField(name: .prefer, value: "respond-async"))
        #expect(RequestPreferences(two).respondAsync)
    }

    @Test func aRequestWithNothingToSendIsAnsweredAtOnceAsUsual() async throws {
        let relay = try await TestRelay(allowCriticalAlerts: false)
        let critical = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x","isCriticalAlert":true}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: critical, headers: [.prefer: "respond-async"])
            // Refused by the relay itself: the outcome is known, so the preference is not applied.
            #expect(response.status == .ok)
            #expect(response.headers[.preferenceApplied] == nil)
            #expect(response.json?["data"]?[0]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
        }
    }
}
