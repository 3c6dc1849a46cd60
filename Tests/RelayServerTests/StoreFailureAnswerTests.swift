import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication
@testable import RelayServer

/// A relay over a memory store whose commits a test can fail, with a gated APNs sender: what it answers while the
/// store fails (issue 37 item 1).
struct FailingStoreRelay {
    let store = MemoryStore()
    let gate = Gate()
    let sender: ScriptedSender
    let relay: Relay
    let logs = LogCapture()
    var key = ""

    init(waitDeadline: Duration = .milliseconds(50), unsavedLimit: Int = 50_000) async throws {
        sender = ScriptedSender(.apns, gate: gate)
        relay = Relay(
            store: store,
            senders: [.apns: sender],
            settings: RelaySettings(waitDeadline: waitDeadline, storeRequestTimeout: .milliseconds(100)),
            // Held writes are committed again only with the next commit here, not on a timer the test would race.
            commits: CommitQueue(
                store: store, unsavedLimit: unsavedLimit, retryBackoff: (.seconds(3600), .seconds(3600)),
                logger: logs.logger),
            logger: logs.logger
        )
        (_, key) = try await TestRelay.addTenant(to: store, name: "acme")
    }

    var application: some ApplicationProtocol {
        get throws { try buildApplication(RelayApplicationParts(relay: relay, logger: logs.logger)) }
    }

    /// The outcomes of the push audit records stored, sorted.
    func storedPushOutcomes() async throws -> [String] {
        try await store.auditRecords(matching: AuditFilter(event: .push), after: 0, limit: 100)
            .compactMap(\.record.outcome).sorted()
    }
}

/// No promise without its record: a request is answered `pending` only when its journal entries are stored; what
/// went out while the store failed is kept in memory and written once the store returns.
@Suite(.timeLimit(.minutes(1)))
struct StoreFailureAnswerTests {
    static let push = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#

    /// At the deadline neither the pending receipt nor its journal entry can be stored: the request is not answered
    /// `pending` but 503, saying that the notification may still be delivered. Its outcome, once known, is held until
    /// the store takes it.
    @Test func aPendingTicketIsNeverAnsweredWithoutItsJournalEntry() async throws {
        let relay = try await FailingStoreRelay()
        try await relay.application.test(.router) { (client) async throws in
            relay.store.failCommits(true)
            let answer = try await client.post("/v1/push", key: relay.key, json: Self.push)
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.object["errors"]?[0]?["code"] == .string("STORE_UNAVAILABLE"))
            #expect(answer.object["errors"]?[0]?["message"]?.stringValue?.contains("may still be delivered") == true)
            #expect(relay.sender.sentPushes.count == 1)
            #expect(try await relay.store.journalStatistics(tenantID: nil).entries == 0)

            // The provider answers while the store still fails: the outcome is held, not lost.
            relay.gate.open()
            await relay.relay.queue.waitUntilIdle()
            #expect(relay.relay.commits.unsavedWrites > 0)
            #expect(try await relay.storedPushOutcomes().isEmpty)

            // The store returns: the next push's commit carries the held writes.
            relay.store.failCommits(false)
            let next = try await client.post("/v1/push", key: relay.key, json: Self.push)
            #expect(next.status == .ok)
            #expect(relay.relay.commits.unsavedWrites == 0)
            #expect(try await relay.storedPushOutcomes() == ["ok", "ok"])
            #expect(try await relay.store.journalStatistics(tenantID: nil).entries == 0)
        }
    }

    /// A request whose outcomes are partly known answers them, and `StoreUnavailable` for the rest, never `pending`.
    @Test func knownOutcomesAreAnsweredAndTheRestAreUnrecorded() async throws {
        let relay = try await FailingStoreRelay()
        let body =
            #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x","isCriticalAlert":true},{"to":"\#(TestRelay.apnsToken)","body":"y"}]}"#
        try await relay.application.test(.router) { (client) async throws in
            relay.store.failCommits(true)
            let answer = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(answer.status == .ok)
            let data = try #require(answer.json?["data"])
            #expect(data[0]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
            #expect(data[1]?["status"] == .string("error"))
            #expect(data[1]?["details"]?["error"] == .string("StoreUnavailable"))
            #expect(data[1]?["id"]?.stringValue?.isEmpty == false)
            relay.gate.open()
        }
    }

    /// While the store is known to fail, a synchronous request's receipts are written ahead of sending with their
    /// journal entries: if its outcome could not be stored, the journal would still resume it.
    @Test func receiptsWrittenAheadAreJournaled() async throws {
        let relay = try await FailingStoreRelay(waitDeadline: .seconds(30))
        try await relay.application.test(.router) { (client) async throws in
            relay.store.failCommits(true)
            relay.gate.open()
            #expect(try await client.post("/v1/push", key: relay.key, json: Self.push).status == .ok)
            #expect(relay.relay.commits.isFailing)

            relay.store.failCommits(false)
            relay.gate.close()
            async let answer = client.post("/v1/push", key: relay.key, json: Self.push)
            // Written ahead, then sent: the sender holding it means its writes are stored.
            while relay.sender.sentPushes.count < 2 { await Task.yield() }
            #expect(try await relay.store.journalStatistics(tenantID: nil).entries == 1)
            relay.gate.open()
            let answered = try await answer
            #expect(answered.json?["data"]?[0]?["status"] == .string("ok"))
            #expect(try await relay.store.journalStatistics(tenantID: nil).entries == 0)
            #expect(try await relay.storedPushOutcomes() == ["ok", "ok"])
        }
    }

    /// Held writes are bounded: at `[store] unsaved_limit`, new push requests are refused (503) before anything is
    /// sent, until the store takes what is held.
    @Test func beyondTheUnsavedLimitNewRequestsAreRefused() async throws {
        let relay = try await FailingStoreRelay(unsavedLimit: 1)
        try await relay.application.test(.router) { (client) async throws in
            relay.store.failCommits(true)
            relay.gate.open()
            #expect(try await client.post("/v1/push", key: relay.key, json: Self.push).status == .ok)
            #expect(relay.relay.commits.isOverUnsavedLimit)
            let refused = try await client.post("/v1/push", key: relay.key, json: Self.push)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.object["errors"]?[0]?["code"] == .string("STORE_UNAVAILABLE"))
            #expect(relay.sender.sentPushes.count == 1)
            let ready = try await client.ready()
            #expect(ready.status == .serviceUnavailable)
            #expect(ready.object["detail"]?.stringValue?.contains("held in memory") == true)

            relay.store.failCommits(false)
            try await relay.relay.commits.submit(StoreBatch())
            try await relay.relay.commits.submit(
                StoreBatch(), audit: [AuditEntry(timeMillis: 0, event: .admin, actor: "test")])
            #expect(!relay.relay.commits.isOverUnsavedLimit)
            #expect(try await client.post("/v1/push", key: relay.key, json: Self.push).status == .ok)
            #expect(relay.sender.sentPushes.count == 2)
        }
    }
}

/// `[store] request_timeout_ms`: a request that needs the store is answered 503 when the store does not answer in
/// time, not after the store's own timeouts, and never 429.
@Suite(.timeLimit(.minutes(1)))
struct StoreRequestTimeoutTests {
    @Test func aLeaseTheStoreDoesNotAnswerIs503AfterTheTimeout() async throws {
        let store = MemoryStore()
        let leases = StallingLeaseStore()
        let sender = ScriptedSender(.apns)
        let relay = Relay(
            store: store,
            senders: [.apns: sender],
            settings: RelaySettings(storeRequestTimeout: .milliseconds(100)),
            rateLimitLeases: leases
        )
        let (_, key) = try await TestRelay.addTenant(to: store, name: "acme")
        let application = try buildApplication(RelayApplicationParts(relay: relay, logger: LogCapture().logger))
        try await application.test(.router) { (client) async throws in
            let answer = try await client.post("/v1/push", key: key, json: StoreFailureAnswerTests.push)
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.object["errors"]?[0]?["code"] == .string("STORE_UNAVAILABLE"))
            #expect(sender.sentPushes.isEmpty)
            #expect(leases.queued == 1)
            // The store answers again: the next request is admitted.
            leases.answerNewestFirst()
            #expect(try await client.post("/v1/push", key: key, json: StoreFailureAnswerTests.push).status == .ok)
            #expect(sender.sentPushes.count == 1)
        }
    }
}

/// `[store] request_timeout_ms` and `unsaved_limit`: defaults, the file, the environment, the bounds.
@Suite struct StoreFailureConfigurationTests {
    @Test func theStoreTimeoutAndTheUnsavedLimitHaveDefaultsAndAreReadFromTheFileAndTheEnvironment() throws {
        let defaults = try #require(parsedConfiguration(""))
        #expect(defaults.store.requestTimeoutMs == 5_000)
        #expect(defaults.store.unsavedLimit == 50_000)
        #expect(RelayAssembly.settings(defaults).storeRequestTimeout == .seconds(5))

        let file = try #require(parsedConfiguration("[store]\nrequest_timeout_ms = 750\nunsaved_limit = 10"))
        #expect(file.store.requestTimeoutMs == 750)
        #expect(file.store.unsavedLimit == 10)
        #expect(RelayAssembly.settings(file).storeRequestTimeout == .milliseconds(750))

        let environment = try #require(
            parsedConfiguration(
                "",
                environment: ["PUSHRELAY_STORE_REQUEST_TIMEOUT_MS": "2000", "PUSHRELAY_STORE_UNSAVED_LIMIT": "7"]))
        #expect(environment.store.requestTimeoutMs == 2_000)
        #expect(environment.store.unsavedLimit == 7)
        #expect(
            configurationProblemKeys("[store]\nrequest_timeout_ms = 99\nunsaved_limit = 0")
                == ["store.request_timeout_ms", "store.unsaved_limit"])
    }
}

/// A store whose key lookups wait, while held, until the test releases them.
final class HangingKeyStore: ForwardingPushStore {
    let base = MemoryStore()
    private let state = Mutex<(held: Bool, waiting: [CheckedContinuation<Void, Never>])>((true, []))

    func release() {
        let waiting = state.withLock { state in
            state.held = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func key(id: String) async throws -> TenantKeyRecord? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let held = state.withLock { state in
                if state.held { state.waiting.append(continuation) }
                return state.held
            }
            if !held { continuation.resume() }
        }
        return try await base.key(id: id)
    }
}

extension StoreRequestTimeoutTests {
    /// A key the authenticator's cache does not hold, from a store that does not answer: 503 after the timeout.
    @Test func aKeyLookupTheStoreDoesNotAnswerIs503AfterTheTimeout() async throws {
        let store = HangingKeyStore()
        let sender = ScriptedSender(.apns)
        let relay = Relay(
            store: store, senders: [.apns: sender], settings: RelaySettings(storeRequestTimeout: .milliseconds(100)))
        let (_, key) = try await TestRelay.addTenant(to: store.base, name: "acme")
        let application = try buildApplication(RelayApplicationParts(relay: relay, logger: LogCapture().logger))
        try await application.test(.router) { (client) async throws in
            let answer = try await client.post("/v1/push", key: key, json: StoreFailureAnswerTests.push)
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.object["errors"]?[0]?["code"] == .string("STORE_UNAVAILABLE"))
            store.release()
            #expect(try await client.post("/v1/push", key: key, json: StoreFailureAnswerTests.push).status == .ok)
            #expect(sender.sentPushes.count == 1)
        }
    }
}
