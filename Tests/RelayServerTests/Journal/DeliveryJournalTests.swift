import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Metrics
import MetricsTestKit
import RelayCore
import RelayStore
import ServiceLifecycle
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The delivery journal through the relay: what is journaled when, and what a relay that starts after another died
/// makes of it.
@Suite(.timeLimit(.minutes(1)))
struct DeliveryJournalTests {
    static let apnsToken = String(repeating: "ab", count: 32)
    static let otherAPNsToken = String(repeating: "cd", count: 32)

    static func apns(_ token: String = apnsToken, title: String = "Hello", extra: String = "") -> String {
        #"{"to":"\#(token)","title":"\#(title)"\#(extra)}"#
    }

    // MARK: - When entries are written

    @Test func anAnswerBeforeTheDeadlineWritesNoJournal() async throws {
        let relay = try await JournalRelay(
            on: MemoryStore(), journalKey: .random(), holding: false, waitDeadline: .seconds(30))
        let result = try await relay.running {
            try await relay.push([Self.apns(), #"{"to":"ExponentPushToken[fast]","body":"x"}"#])
        }
        #expect(result.tickets.map(\.state.isPending) == [false, false])
        let batches = relay.store.batches
        #expect(batches.allSatisfy { $0.journal.isEmpty && $0.journalDeletes.isEmpty })
        // One commit for the request, with its outcomes, as without the journal.
        #expect(batches.filter { !$0.receipts.isEmpty || !$0.provisionalReceipts.isEmpty }.count == 1)
    }

    @Test func aNotificationPendingAtTheDeadlineIsJournaledBeforeTheAnswerAndLeavesWithItsOutcome() async throws {
        let store = MemoryStore()
        let relay = try await JournalRelay(on: store, journalKey: .random(), waitDeadline: .milliseconds(50))
        try await relay.running {
            let result = try await relay.push([Self.apns()])
            #expect(result.tickets.first?.state == .pending)
            // The commit that stored the pending receipt held the entry, and it was over before the answer.
            #expect(try await store.journalStatistics().entries == 1)
            let journaled = try #require(relay.store.batches.first { !$0.journal.isEmpty })
            #expect(journaled.provisionalReceipts.map(\.id) == result.tickets.map(\.id))
            #expect(journaled.journal.first?.attempts == 1, "its job had begun sending")

            relay.senders[.apns]?.release()
            await relay.relay.queue.waitUntilIdle()
            #expect(try await store.journalStatistics().entries == 0)
            let receipt = try #require(try await relay.receipts(result.tickets.map(\.id)).first)
            #expect(receipt.status == .ok)
            // The apns-id is the receipt id, fixed at admission.
            #expect(receipt.providerMessageID == receipt.id)
            #expect(relay.senders[.apns]?.sent.first?.apnsID == UUID(uuidString: receipt.id))
        }
    }

    @Test func theJournalHoldsNoTokenAndNoContentInTheDatabaseOrItsWAL() async throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = folder.file("relay.db")
        let store = try SQLiteStore(path: path)
        try await store.migrate()
        let title = "Zanzibar-quartz-incident-7731"
        let relay = try await JournalRelay(on: store, journalKey: .random(), waitDeadline: .milliseconds(50))
        try await relay.running {
            let result = try await relay.push([Self.apns(Self.otherAPNsToken, title: title)], acceptance: .asynchronous)
            #expect(result.asynchronous)
            #expect(try await store.journalStatistics().entries == 1)
            var bytes: [UInt8] = []
            for file in [path, path + "-wal"] {
                bytes += (try? Data(contentsOf: URL(fileURLWithPath: file))).map(Array.init) ?? []
            }
            #expect(bytes.count > 0)
            #expect(!bytes.windowsContain(Array(Self.otherAPNsToken.utf8)), "no device token")
            #expect(!bytes.windowsContain(Array(title.utf8)), "no content")
            relay.senders[.apns]?.release()
        }
    }

    // MARK: - Resuming after a crash

    @Test func aRelayStartingAfterAnotherDiedResumesEveryJournaledNotification() async throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let base = try SQLiteStore(path: folder.file("relay.db"))
        try await base.migrate()
        let key = JournalKey.random()

        // Accepted asynchronously by a relay whose deliveries never ran: journaled, never sent.
        let idle = try await JournalRelay(on: base, chain: "relay-1-idle", journalKey: key)
        let queued = try await idle.running(deliveries: false) {
            try await idle.push([Self.apns(Self.otherAPNsToken)], acceptance: .asynchronous)
        }
        // In flight at the deadline when the relay died: one still in time, one whose time to live (0 s) is over.
        let first = try await JournalRelay(on: base, journalKey: key, tenant: idle.tenant)
        let (inFlight, expired) = try await first.running {
            let inFlight = try await first.push([Self.apns()])
            let expired = try await first.push([Self.apns(extra: #","ttl":0"#)])
            #expect((inFlight.tickets + expired.tickets).allSatisfy { $0.state == .pending })
            // The process dies: nothing it does reaches the store any more (its jobs then end unrecorded).
            first.store.kill()
            first.senders[.apns]?.release()
            return (inFlight.tickets[0].id, expired.tickets[0].id)
        }
        let ids = [inFlight, expired, queued.tickets[0].id]
        #expect(try await base.journalStatistics().entries == 3)
        #expect(try await first.receipts(ids).map(\.status) == [.pending, .pending, .pending])

        // The same instance starts again: before it takes requests, it claims what it held and resumes it.
        let second = try await JournalRelay(on: base, journalKey: key, holding: false, tenant: first.tenant)
        let summary = try await second.relay.resumeJournal(includingOwn: true)
        #expect(summary.claimed == 3)
        #expect(summary.sent == 2)
        #expect(summary.concluded == 1)
        try await second.running { await second.relay.queue.waitUntilIdle() }

        // Every notification is final, the journal empty.
        let receipts = try await second.receipts(ids)
        #expect(receipts.map(\.status) == [.ok, .error, .ok])
        #expect(receipts[1].code == .providerUnavailable)
        #expect(receipts[1].message?.contains("outcome unknown after a restart") == true)
        #expect(try await base.journalStatistics().entries == 0)
        // The one in flight went again with the apns-id of its first send; the expired one was not sent again; the
        // queued one was never sent before.
        let resent = try #require(second.senders[.apns]?.sent)
        #expect(Set(resent.map(\.token)) == [Self.apnsToken, Self.otherAPNsToken])
        let firstSend = try #require(first.senders[.apns]?.sent.first { $0.message.ttl == nil })
        #expect(resent.first { $0.token == Self.apnsToken }?.apnsID == firstSend.apnsID)
        #expect(idle.senders[.apns]?.sent.isEmpty == true)
        // Each is retried only until the deadline it was admitted with (the resume window, 300 s, from its
        // admission), not for a new window from its resend.
        for push in resent {
            let receipt = try #require(receipts.first { $0.id == push.apnsID?.uuidString.lowercased() })
            let deadline = try #require(push.sendDeadline, "a resumed push keeps the deadline it was admitted with")
            #expect(abs(deadline.timeIntervalSince(receipt.createdAt) - 300) < 1)
        }
        // Each ends with one audit record that says it was resumed, on the resuming relay's chain.
        let records = try await base.auditRecords(chain: "relay-1", after: 0, limit: 100).map(\.record)
        #expect(records.count == 3)
        #expect(records.allSatisfy { $0.detail?.hasPrefix("resumed after a restart: ") == true })
        #expect(
            records.contains { $0.outcome == "ProviderUnavailable" && $0.detail?.contains("not sent again") == true })
        #expect(records.contains { $0.detail?.contains("journaled before its first send") == true })
        // Nothing is left to claim.
        #expect(try await second.relay.resumeJournal(includingOwn: true).claimed == 0)
    }

    @Test func aResumedNotificationWhoseAppLostItsCredentialsIsConcludedProviderNotConfigured() async throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let base = try SQLiteStore(path: folder.file("relay.db"))
        try await base.migrate()
        let key = JournalKey.random()
        var (tenant, tenantKey) = try await TestRelay.addTenant(to: base, name: "acme", limits: .init(burst: 200))
        tenant.apps = [AppName.default, "beta"]
        try await base.updateTenant(tenant)

        // Accepted for the app `beta` by a relay whose deliveries never ran: journaled, never sent.
        let beta = HoldingSender(.apns)
        let first = try await JournalRelay(
            on: base, journalKey: key, tenant: (tenant, tenantKey), apps: ["beta": [.apns: beta]])
        let id = try await first.running(deliveries: false) {
            let result = try await first.push([Self.apns(extra: #","app":"beta""#)], acceptance: .asynchronous)
            #expect(result.tickets.map(\.state) == [.pending])
            return try #require(result.tickets.first).id
        }
        #expect(try await base.journalStatistics().entries == 1)

        // The relay starts again with `beta` gone from its configuration: the notification cannot be sent, and is
        // concluded rather than left pending.
        let second = try await JournalRelay(on: base, journalKey: key, holding: false, tenant: (tenant, tenantKey))
        #expect(try await second.relay.resumeJournal(includingOwn: true).claimed == 1)
        try await second.running { await second.relay.queue.waitUntilIdle() }

        let receipt = try #require(try await second.receipts([id]).first)
        #expect(receipt.status == .error)
        #expect(receipt.code == .providerNotConfigured)
        #expect(try await base.journalStatistics().entries == 0)
        // Nothing went out, on either relay's senders.
        #expect(beta.sent.isEmpty)
        #expect(second.senders.values.allSatisfy { $0.sent.isEmpty })
    }

    /// After a crash, the daily quota counts what the journal still holds: those notifications have no outcome yet,
    /// so no usage, but they were admitted, and the restarted relay is sending them.
    @Test func notificationsInTheJournalCountAgainstTheDailyQuotaAfterARestart() async throws {
        let base = MemoryStore()
        try await base.migrate()
        let key = JournalKey.random()
        let limits = RateLimits(ratePerSecond: 100, burst: 10, dailyQuota: 3, perDevicePerMinute: 30)
        let tenant = try await TestRelay.addTenant(to: base, name: "acme", limits: limits)
        // Two notifications answered pending (journaled); then the relay dies.
        let first = try await JournalRelay(on: base, journalKey: key, tenant: tenant)
        try await first.running {
            let result = try await first.push([Self.apns(), Self.apns(Self.otherAPNsToken)])
            #expect(result.tickets.allSatisfy { $0.state == .pending })
            first.store.kill()
            first.senders[.apns]?.release()
        }
        #expect(try await base.journalStatistics(tenantID: tenant.0.id).entries == 2)
        #expect(try await base.journalStatistics(tenantID: "another-tenant").entries == 0)
        #expect(try await base.quotaUsed(tenantID: tenant.0.id, on: Date()) == 2)

        // The next start resumes both (its sender holds them: still in flight, no usage yet); of a quota of 3, one
        // more notification fits, a second does not.
        let second = try await JournalRelay(on: base, journalKey: key, tenant: tenant)
        #expect(try await second.relay.resumeJournal(includingOwn: true).sent == 2)
        try await second.running {
            await second.senders[.apns]?.waitForArrivals(2)
            #expect(try await second.push([Self.apns()]).tickets.count == 1)
            do {
                _ = try await second.push([Self.apns()])
                Issue.record("a fourth notification was admitted with a daily quota of 3")
            } catch let refusal as RequestRefusal {
                guard case .rateLimited(_, let dailyQuota, _) = refusal else {
                    Issue.record("refused otherwise: \(refusal)")
                    return
                }
                #expect(dailyQuota)
            }
            second.senders[.apns]?.release()
        }
        #expect(try await base.journalStatistics().entries == 0)
    }

    @Test func shutdownJournalsWhatTheDrainLeftAndAnotherInstanceTakesItAtOnce() async throws {
        let clock = ManualClock()
        let base = MemoryStore()
        let key = JournalKey.random()
        let first = try await JournalRelay(
            on: base, journalKey: key, waitDeadline: .seconds(10),
            queue: DeliveryQueue(clock: .manual(clock), drainTimeout: .seconds(5)), clock: .manual(clock))
        let group = ServiceGroup(
            configuration: .init(
                services: [first.relay.commits, first.relay.queue], gracefulShutdownSignals: [],
                logger: JournalRelay.logger)
        )
        let ticket = try await withThrowingTaskGroup(of: Ticket?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            tasks.addTask { try await first.push([Self.apns()]).tickets.first }
            // In flight, and its request waiting for the 10 s deadline; then SIGTERM.
            await first.senders[.apns]?.waitForArrivals(1)
            await clock.waitForSleepers(1)
            await group.triggerGracefulShutdown()
            // The drain's 5 s pass before the request's deadline: what is in flight is journaled, then cancelled.
            await clock.waitForSleepers(2)
            clock.advance(by: .seconds(5))
            var ticket: Ticket?
            for try await answer in tasks { ticket = ticket ?? answer }
            return ticket
        }
        #expect(ticket?.state == .pending)
        // Never journaled before (its request had not reached its deadline); journaled by the shutdown, its lease
        // released: another instance takes it without waiting for a lease to end.
        #expect(try await base.journalStatistics().entries == 1)
        let other = try await JournalRelay(
            on: base, instance: "relay-2", journalKey: key, holding: false, clock: .manual(clock),
            tenant: first.tenant)
        #expect(try await other.relay.resumeJournal(includingOwn: false).sent == 1)
        try await other.running { await other.relay.queue.waitUntilIdle() }
        let id = try #require(ticket?.id)
        #expect(try await other.receipts([id]).map(\.status) == [.ok])
        #expect(other.senders[.apns]?.sent.first?.apnsID == first.senders[.apns]?.sent.first?.apnsID)
        #expect(try await base.journalStatistics().entries == 0)
    }

    @Test func aLiveInstanceRenewsItsLeasesAndADeadOnesEntriesAreTakenOver() async throws {
        let clock = ManualClock()
        let base = MemoryStore()
        let key = JournalKey.random()
        let a = try await JournalRelay(on: base, instance: "relay-a", journalKey: key, clock: .manual(clock))
        let b = try await JournalRelay(
            on: base, instance: "relay-b", journalKey: key, holding: false, clock: .manual(clock), tenant: a.tenant)
        let sweepA = JournalService(relay: a.relay, logger: JournalRelay.logger)
        let sweepB = JournalService(relay: b.relay, logger: JournalRelay.logger)
        let id = try await a.running {
            try await b.running {
                let result = try await a.push([Self.apns()], acceptance: .asynchronous)
                await a.senders[.apns]?.waitForArrivals(1)
                // Held by relay-a for 60 s: relay-b leaves it, and relay-a's sweep at 50 s renews it.
                clock.advance(by: .seconds(30))
                await sweepB.sweep()
                clock.advance(by: .seconds(20))
                await sweepA.sweep()
                clock.advance(by: .seconds(20))
                await sweepB.sweep()
                #expect(b.senders[.apns]?.sent.isEmpty == true, "a live instance's entry is never taken")
                // relay-a dies: its lease (to 110 s) ends unrenewed, and relay-b takes the entry over.
                a.store.kill()
                clock.advance(by: .seconds(50))
                await sweepB.sweep()
                await b.relay.queue.waitUntilIdle()
                a.senders[.apns]?.release()
                return result.tickets[0].id
            }
        }
        #expect(b.senders[.apns]?.sent.map(\.apnsID) == a.senders[.apns]?.sent.map(\.apnsID))
        #expect(try await b.receipts([id]).map(\.status) == [.ok])
        #expect(try await base.journalStatistics().entries == 0)
    }

    @Test func theJournalsSizeAgeAndResumptionsAreMetrics() async throws {
        let metrics = TestMetrics()
        try await withMetricsFactory(metrics) {
            let clock = ManualClock()
            let base = MemoryStore()
            let key = JournalKey.random()
            let first = try await JournalRelay(on: base, journalKey: key, clock: .manual(clock))
            try await first.running {
                _ = try await first.push([Self.apns()], acceptance: .asynchronous)
                await first.senders[.apns]?.waitForArrivals(1)
                first.store.kill()
                first.senders[.apns]?.release()
            }
            clock.advance(by: .seconds(42))
            await JournalService.publishGauges(first.relay)
            #expect(try metrics.expectGauge("relay_journal_entries").lastValue == 1)
            #expect(try metrics.expectGauge("relay_journal_oldest_age_seconds").lastValue == 42)

            let second = try await JournalRelay(
                on: base, journalKey: key, holding: false, clock: .manual(clock), tenant: first.tenant)
            try await second.running {
                try await second.relay.resumeJournal(includingOwn: true)
                await second.relay.queue.waitUntilIdle()
            }
            #expect(metrics.counterTotal(label: "relay_journal_resumed_total", dimensions: [("action", "sent")]) == 1)
            await JournalService.publishGauges(second.relay)
            #expect(try metrics.expectGauge("relay_journal_entries").lastValue == 0)
            #expect(try metrics.expectGauge("relay_journal_oldest_age_seconds").lastValue == 0)
        }
    }

    // MARK: - The APIs

    @Test func aFullQueueAnswers503AndSendsNothing() async throws {
        let relay = try await JournalRelay(
            on: MemoryStore(), journalKey: .random(), queue: DeliveryQueue(capacity: 2))
        let application = try buildApplication(RelayApplicationParts(relay: relay.relay, logger: JournalRelay.logger))
        try await application.test(.router) { client in
            let two = #"{"messages":[{"to":["\#(Self.apnsToken)","\#(Self.otherAPNsToken)"],"body":"x"}]}"#
            let held = try await client.post("/v1/push", key: relay.key, json: two)
            #expect(held.status == .ok)
            #expect(relay.relay.queue.room == 0)

            let refused = try await client.post("/v1/push", key: relay.key, json: #"{"messages":[\#(Self.apns())]}"#)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.headers[.retryAfter] == "5")
            #expect(refused.object["errors"]?[0]?["code"] == .string("QUEUE_FULL"))
            let oneUptime = try await client.post(
                "/push-relay/send", key: relay.key, json: #"{"to":"\#(Self.apnsToken)","title":"t","body":"b"}"#)
            #expect(oneUptime.status == .serviceUnavailable)
            #expect(relay.senders[.apns]?.sent.count == 2, "nothing of the refused requests was sent")

            relay.senders[.apns]?.release()
            await relay.relay.queue.waitUntilIdle()
            #expect(relay.relay.queue.room == 2)
            let again = try await client.post("/v1/push", key: relay.key, json: #"{"messages":[\#(Self.apns())]}"#)
            #expect(again.status == .ok)
        }
    }
}

extension Ticket.State {
    var isPending: Bool { self == .pending }
}
