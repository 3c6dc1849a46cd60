import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Metrics
import MetricsTestKit
import RelayCore
import RelayProviders
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication
@testable import RelayServer

/// What the relay writes to the audit log for pushes and refused requests, and the usage it counts.
@Suite(.timeLimit(.minutes(1)))
struct AuditTrailTests {
    func records(_ relay: TestRelay, _ filter: AuditFilter = AuditFilter()) async throws -> [AuditRecord] {
        try await relay.store.auditRecords(matching: filter, after: 0, limit: 1_000).map(\.record)
    }

    @Test func everyNotificationIsRecordedBeforeTheResponseWithoutTokenOrContent() async throws {
        let relay = try await TestRelay(allowCriticalAlerts: false)
        let body =
            #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.deadAPNsToken)"],"title":"secret title","body":"b"},{"to":"\#(TestRelay.fcmToken)","body":"x","isCriticalAlert":true}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: body, headers: [.xForwardedFor: "203.0.113.9"])
            #expect(response.status == .ok)
            let requestID = try #require(response.headers[.requestID])
            // Committed before the response: no waiting here.
            let pushes = try await records(relay, AuditFilter(event: .push))
            #expect(pushes.count == 3)
            #expect(Set(pushes.compactMap(\.outcome)) == ["ok", "DeviceNotRegistered", "CriticalAlertsNotAllowed"])
            #expect(pushes.allSatisfy { $0.requestID == requestID && $0.tenantID == relay.tenant.id })
            #expect(pushes.allSatisfy { $0.keyID == TenantKeys.keyID(of: relay.key) })
            #expect(pushes.first { $0.outcome == "CriticalAlertsNotAllowed" }?.critical == true)
            #expect(pushes.first { $0.outcome == "DeviceNotRegistered" }?.attempts == 1)
            // No trusted proxies: the forwarded address is not believed.
            #expect(pushes.allSatisfy { $0.client != "203.0.113.9" })
            let text = pushes.map { String(decoding: $0.canonicalBytes(), as: UTF8.self) }.joined()
            for secret in [TestRelay.apnsToken, TestRelay.deadAPNsToken, TestRelay.fcmToken, "secret title", relay.key]
            {
                #expect(!text.contains(secret))
            }
            #expect(try await relay.store.verifyAuditChain("relay").isIntact)
        }
    }

    @Test func refusedRequestsAreRecordedByKeyIDOnly() async throws {
        let relay = try await TestRelay()
        let wrongSecret = String(relay.key.prefix(21)) + String(repeating: "A", count: 43)
        try await relay.application.test(.router) { client in
            let unauthorized = try await client.post("/v1/push", key: wrongSecret, json: #"{"messages":[]}"#)
            #expect(unauthorized.status == .unauthorized)
            let invalid = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"x","sound":{"volume":7}}]}"#)
            #expect(invalid.status == .badRequest)
            let refused = try await records(relay, AuditFilter(event: .refused))
            #expect(refused.map(\.outcome) == ["UNAUTHORIZED", "VALIDATION_ERROR"])
            #expect(refused[0].keyID == TenantKeys.keyID(of: relay.key))
            #expect(refused[0].tenantID == nil)
            #expect(refused[1].tenantID == relay.tenant.id)
            #expect(refused[1].detail?.contains("messages[0].sound.volume") == true)
            let text = refused.map { String(decoding: $0.canonicalBytes(), as: UTF8.self) }.joined()
            #expect(!text.contains(wrongSecret) && !text.contains(relay.key))
        }
    }

    @Test func usageCountsOutcomesPerProvider() async throws {
        let relay = try await TestRelay(allowCriticalAlerts: false)
        let body =
            #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.deadAPNsToken)"],"body":"b"},{"to":"\#(TestRelay.fcmToken)","body":"x","isCriticalAlert":true}]}"#
        try await relay.application.test(.router) { client in
            #expect(try await client.post("/v1/push", key: relay.key, json: body).status == .ok)
            let usage = try await relay.store.usage(tenantID: relay.tenant.id, fromDay: "2000-01-01")
            #expect(usage.first { $0.provider == .apns }?.counts == UsageCounts(delivered: 1, tokenInvalid: 1))
            // The critical alert, refused (`CriticalAlertsNotAllowed`), counts as critical all the same.
            #expect(usage.first { $0.provider == .fcm }?.counts == UsageCounts(rejected: 1, critical: 1))
        }
    }

    @Test func aProviderTheTenantMayNotUseIsRefusedAndTheCriticalChannelIsTheTenants() async throws {
        let relay = try await TestRelay()
        var tenant = relay.tenant
        tenant.allowedProviders = [.fcm]
        tenant.criticalChannel = "pager"
        try await relay.store.updateTenant(tenant)
        let fresh = Relay(store: relay.store, senders: relay.senders.mapValues { $0 as any PushSender })
        let app = try buildApplication(RelayApplicationParts(relay: fresh))
        let body =
            #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"b"},{"to":"\#(TestRelay.fcmToken)","body":"x","isCriticalAlert":true}]}"#
        try await app.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(response.status == .ok)
            #expect(response.json?["data"]?[0]?["details"]?["error"] == .string("ProviderNotConfigured"))
            #expect(response.json?["data"]?[1]?["status"] == .string("ok"))
            #expect(relay.senders[.apns]?.sentPushes.isEmpty == true)
            #expect(relay.senders[.fcm]?.sentPushes.first?.criticalChannel == "pager")
        }
    }
}

@Suite struct TrustedProxiesTests {
    let proxies = TrustedProxies(["10.0.0.0/8", "fd00::/8", "192.0.2.7"])

    @Test func aDirectClientIsItsPeer() {
        #expect(proxies.client(peer: "198.51.100.4", forwardedFor: "1.2.3.4") == "198.51.100.4")
        #expect(TrustedProxies([]).client(peer: "10.1.1.1", forwardedFor: "1.2.3.4") == "10.1.1.1")
    }

    @Test func theForwardedAddressIsBelievedOnlyFromATrustedProxy() {
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "198.51.100.4") == "198.51.100.4")
        // A client-written entry on the left is not believed; the nearest untrusted hop is the client.
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "6.6.6.6, 198.51.100.4, 192.0.2.7") == "198.51.100.4")
        #expect(proxies.client(peer: "fd12::1", forwardedFor: "2001:db8::5") == "2001:db8::5")
        #expect(proxies.client(peer: "::ffff:10.0.0.1", forwardedFor: "198.51.100.4") == "198.51.100.4")
        // Garbage in the chain stops belief at the proxy.
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "nonsense") == "10.1.2.3")
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: nil) == "10.1.2.3")
    }

    @Test func prefixesAreMatchedBitByBit() {
        let narrow = TrustedProxies(["192.168.1.128/25"])
        #expect(narrow.isTrusted("192.168.1.200"))
        #expect(!narrow.isTrusted("192.168.1.127"))
        #expect(!narrow.isTrusted("2001:db8::1"))
    }
}

/// Group commit: concurrent submitters share transactions and every audit record lands on one verifiable chain.
@Suite(.timeLimit(.minutes(1)))
struct CommitQueueTests {
    @Test func concurrentSubmissionsShareCommitsAndChainInOrder() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let queue = CommitQueue(
            store: store,
            settings: AuditLogSettings(chain: "i1", signingKey: key, checkpointInterval: .zero)
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await queue.run() }
            try await withThrowingTaskGroup(of: Void.self) { submitters in
                for index in 0..<200 {
                    submitters.addTask {
                        try await queue.submit(
                            StoreBatch(),
                            audit: [AuditEntry(timeMillis: Int64(index), event: .push, outcome: "ok")]
                        )
                    }
                }
                try await submitters.waitForAll()
            }
            queue.close()
            try await group.waitForAll()
        }
        let records = try await store.auditRecords(chain: "i1", after: 0, limit: 1_000)
        #expect(records.map(\.record.seq) == Array(1...200))
        let verification = try await store.verifyAuditChain("i1", publicKey: key.publicKey, requireSignedEnd: true)
        #expect(verification.isIntact)
        #expect(verification.checkpointsVerified >= 1)
    }

    @Test func aWriteAfterCloseFailsInsteadOfHanging() async throws {
        let queue = CommitQueue(store: MemoryStore())
        queue.close()
        await #expect(throws: CommitQueueClosed.self) {
            try await queue.submit(StoreBatch(receipts: []), audit: [AuditEntry(timeMillis: 0, event: .admin)])
        }
    }

    @Test func aChainResumesFromTheStoredHead() async throws {
        let store = MemoryStore()
        for _ in 0..<2 {
            let queue = CommitQueue(store: store, settings: AuditLogSettings(chain: "i1"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await queue.run() }
                try await queue.submit(StoreBatch(), audit: [AuditEntry(timeMillis: 1, event: .admin, outcome: "x")])
                queue.close()
                try await group.waitForAll()
            }
        }
        #expect(try await store.auditHead(chain: "i1")?.seq == 2)
        #expect(try await store.verifyAuditChain("i1").isIntact)
    }

    @Test func withTheAuditLogOffOnlyTheStoreWritesAreCommitted() async throws {
        let store = MemoryStore()
        let queue = CommitQueue(store: store, settings: AuditLogSettings(enabled: false, chain: "i1"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await queue.run() }
            var batch = StoreBatch()
            batch.count(UsageCounts(delivered: 1), for: UsageKey(tenantID: "t", day: "2026-01-01", provider: .apns))
            try await queue.submit(batch, audit: [AuditEntry(timeMillis: 1, event: .push, outcome: "ok")])
            queue.close()
            try await group.waitForAll()
        }
        #expect(try await store.auditChains().isEmpty)
        #expect(try await store.usage(tenantID: "t", fromDay: "2026-01-01").count == 1)
    }
}

/// An Expo receipt that arrives after the response is audited, and moves the usage counted as accepted at ticket time
/// to the receipt's outcome.
@Suite(.timeLimit(.minutes(1)))
struct AuditedExpoReceiptsTests {
    @Test func anExpoPushIsAcceptedUntilItsReceiptThenCountedWithItsOutcome() async throws {
        let metrics = TestMetrics()
        try await withMetricsFactory(metrics) {
            let relay = try await TestRelay()
            let (dead, fine) = (TestRelay.expoTicketToken("dead"), TestRelay.expoTicketToken("fine"))
            @Sendable func pushes(_ outcome: String) -> Int64 {
                metrics.counterTotal(
                    label: "relay_pushes_total",
                    dimensions: [
                        ("tenant", relay.tenant.id), ("provider", "expo"), ("outcome", outcome), ("app", "default"),
                    ]
                )
            }
            @Sendable func usage() async throws -> UsageCounts? {
                try await relay.store.usage(tenantID: relay.tenant.id, fromDay: "2000-01-01").first?.counts
            }
            try await relay.application.test(.router) { client in
                let body = #"{"messages":[{"to":["\#(dead)","\#(fine)"],"body":"x"}]}"#
                let response = try await client.post("/v1/push", key: relay.key, json: body)
                #expect(response.status == .ok)
                #expect(response.json?["data"]?[0]?["status"] == .string("ok"))
                // Expo took both: accepted, in usage and in the counter, until the receipts come.
                #expect(try await usage() == UsageCounts(accepted: 2))
                #expect(pushes("accepted") == 2)
                #expect(pushes("delivered") == 0)

                let receipts = AuditedExpoReceipts(relay: relay.relay)
                let gone = DeliveryOutcome.tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil)
                #expect(try await receipts.recordExpoReceipt(ticketID: "ticket-dead", outcome: gone))
                #expect(try await usage() == UsageCounts(tokenInvalid: 1, accepted: 1))
                #expect(pushes("token_invalid") == 1)
                #expect(
                    try await receipts.recordExpoReceipt(
                        ticketID: "ticket-fine", outcome: .delivered(providerMessageID: nil)))
                #expect(try await usage() == UsageCounts(delivered: 1, tokenInvalid: 1))
                #expect(pushes("delivered") == 1)
                // A receipt recorded already is not counted again.
                #expect(try await !receipts.recordExpoReceipt(ticketID: "ticket-dead", outcome: gone))
                #expect(pushes("token_invalid") == 1)
                #expect(pushes("accepted") == 2, "a counter never goes down: the accepted count stays")
                #expect(try await usage() == UsageCounts(delivered: 1, tokenInvalid: 1))
            }
        }
    }

    @Test func aLateReceiptIsRecordedAndMovesUsage() async throws {
        let store = MemoryStore()
        let relay = Relay(
            store: store, senders: [:], commits: CommitQueue(store: store, settings: AuditLogSettings(chain: "i1")))
        let created = Date(timeIntervalSince1970: 1_750_000_000)
        let receipt = Receipt(
            id: "r1", tenantID: "t1", keyID: "k1", provider: .expo, tokenFingerprint: "fp1", isCritical: true,
            status: .pending, providerMessageID: "ticket-1", expoTicketID: "ticket-1", createdAt: created,
            updatedAt: created, expiresAt: created.addingTimeInterval(3_600)
        )
        var ticketTime = StoreBatch(receipts: [receipt])
        ticketTime.count(UsageCounts(accepted: 1), for: UsageKey(tenantID: "t1", date: created, provider: .expo))
        try await store.commit(ticketTime)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await relay.commits.run() }
            let receipts = AuditedExpoReceipts(relay: relay)
            let dead = DeliveryOutcome.tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil)
            #expect(try await receipts.recordExpoReceipt(ticketID: "ticket-1", outcome: dead))
            // Unknown tickets, and tickets already recorded (by another relay too), change nothing and write nothing.
            #expect(
                try await !receipts.recordExpoReceipt(ticketID: "nope", outcome: .delivered(providerMessageID: nil)))
            #expect(try await !receipts.recordExpoReceipt(ticketID: "ticket-1", outcome: dead))
            relay.commits.close()
            try await group.waitForAll()
        }
        let records = try await store.auditRecords(chain: "i1", after: 0, limit: 10).map(\.record)
        #expect(records.count == 1)
        #expect(records.first?.outcome == "DeviceNotRegistered")
        #expect(records.first?.tenantID == "t1" && records.first?.tokenFingerprint == "fp1")
        #expect(records.first?.critical == true)
        let usage = try await store.usage(tenantID: "t1", fromDay: "2000-01-01")
        #expect(usage.map(\.counts) == [UsageCounts(tokenInvalid: 1)])
        #expect(try await store.receipts(ids: ["r1"], tenantID: "t1").first?.errorCode == "DeviceNotRegistered")
    }
}
