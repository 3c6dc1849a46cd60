import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// When a request's receipts reach the store: once, with their outcomes; at the deadline as they stand; ahead of
/// sending while the store fails.
@Suite(.timeLimit(.minutes(1)))
struct ReceiptWritingTests {
    func lookup(_ client: some TestClientProtocol, _ relay: TestRelay, _ ids: [String]) async throws -> [String:
        JSONValue]
    {
        let json = try JSONEncoder().encode(["ids": ids])
        let response = try await client.post(
            "/v1/receipts", key: relay.key, json: String(decoding: json, as: UTF8.self))
        return response.json?["data"]?.objectValue ?? [:]
    }

    @Test func atTheDeadlineEveryIDOfTheAnswerIsFoundAndTheOutcomeFollows() async throws {
        let gate = Gate()
        let relay = try await TestRelay(allowCriticalAlerts: false, gate: gate, waitDeadline: .milliseconds(50))
        let body =
            #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x","isCriticalAlert":true},{"to":"\#(TestRelay.fcmToken)","body":"y"}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(response.status == .ok)
            let data = try #require(response.json?["data"])
            #expect(data[0]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
            #expect(data[1]?["status"] == .string("pending"))
            let ids = try [0, 1].map { try #require(data[$0]?["id"]?.stringValue) }

            // The refused receipt and the pending one are both stored before the answer.
            let early = try await lookup(client, relay, ids)
            #expect(early[ids[0]]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
            #expect(early[ids[1]]?["status"] == .string("pending"))

            gate.open()
            await relay.relay.queue.waitUntilIdle()
            let later = try await lookup(client, relay, ids)
            #expect(later[ids[0]]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
            #expect(later[ids[1]]?["status"] == .string("ok"))
            // One audit record per notification, however the receipts were written.
            let records = try await relay.store.auditRecords(matching: AuditFilter(event: .push), after: 0, limit: 100)
            #expect(
                records.map(\.record.outcome).sorted { ($0 ?? "") < ($1 ?? "") } == ["CriticalAlertsNotAllowed", "ok"])
        }
    }

    @Test func whileTheStoreFailsNothingIsSentUnrecorded() async throws {
        let relay = try await TestRelay()
        let push = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#
        try await relay.application.test(.router) { client in
            relay.store.failCommits(true)
            // The outage begins while this push is on its way: it went out, so its outcome is the answer; what could
            // not be stored is held in memory until the store takes it.
            let first = try await client.post("/v1/push", key: relay.key, json: push)
            #expect(first.status == .ok)
            #expect(first.json?["data"]?[0]?["status"] == .string("ok"))
            let firstID = try #require(first.json?["data"]?[0]?["id"]?.stringValue)
            #expect(relay.sentCount == 1)
            #expect(relay.relay.commits.unsavedWrites > 0)

            // Known to be failing now: receipts are written ahead, and a store that is down refuses before sending.
            let refused = try await client.post("/v1/push", key: relay.key, json: push)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.object["errors"]?[0]?["code"] == .string("STORE_UNAVAILABLE"))
            #expect(relay.sentCount == 1)

            // The store is back: the next push is written ahead, sent, and its receipt completed.
            relay.store.failCommits(false)
            for _ in 0..<2 {
                let again = try await client.post("/v1/push", key: relay.key, json: push)
                #expect(again.status == .ok)
                let id = try #require(again.json?["data"]?[0]?["id"]?.stringValue)
                #expect(try await lookup(client, relay, [id])[id]?["status"] == .string("ok"))
            }
            #expect(relay.sentCount == 3)
            #expect(!relay.relay.commits.isFailing)
            // The first push's outcome, held during the outage, was written with the first commit after it.
            #expect(try await lookup(client, relay, [firstID])[firstID]?["status"] == .string("ok"))
        }
    }
}
