import Foundation
import Logging
import RelayCore
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication

/// A memory store whose commits can be made to fail, or to hang until released, as a store in trouble would.
final class TroubledStore: ForwardingPushStore {
    let base = MemoryStore()

    private struct State {
        var failing = false
        var hanging = false
        var hung: [CheckedContinuation<Void, Never>] = []
        var attempts = 0
    }

    private let state = Mutex(State())
    /// Fired when a commit reaches the store while commits hang.
    let hangingCommitStarted = Signal()

    func fail(_ fail: Bool) { state.withLock { $0.failing = fail } }
    func hang() { state.withLock { $0.hanging = true } }
    /// How many commits reached the store.
    var attempts: Int { state.withLock { $0.attempts } }

    /// Lets the commits that hang go on (to fail or succeed as ``fail(_:)`` says), and later ones at once.
    func release() {
        let hung = state.withLock { state in
            state.hanging = false
            defer { state.hung = [] }
            return state.hung
        }
        for continuation in hung { continuation.resume() }
    }

    func commit(_ batch: StoreBatch) async throws {
        let hangs = state.withLock { state in
            state.attempts += 1
            return state.hanging
        }
        if hangs {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state in
                    if state.hanging { state.hung.append(continuation) }
                    return state.hanging
                }
                hangingCommitStarted.fire()
                if !waiting { continuation.resume() }
            }
        }
        if state.withLock({ $0.failing }) { throw StoreError.unavailable("commits are failing (test)") }
        try await base.commit(batch)
    }
}

/// Issue 37 item 1: writes that record what happened are held while the store fails and written once it returns;
/// writes an answer depends on fail, or are withdrawn when no commit takes them in time.
@Suite(.timeLimit(.minutes(1)))
struct CommitQueueHeldWritesTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func receipt(_ id: String) -> Receipt { CommitQueueTests.receipt(id) }

    /// Held writes survive failed commits, are tried again on the clock's back-off without new traffic, and land
    /// with their audit records chained without a gap; answering writes of the same commits get the error.
    @Test func heldWritesAreWrittenWhenTheStoreReturns() async throws {
        let clock = ManualClock()
        let store = TroubledStore()
        let key = AuditSigningKey.generate()
        let queue = CommitQueue(
            store: store,
            settings: AuditLogSettings(chain: "relay", signingKey: key, checkpointInterval: .seconds(3600)),
            retryBackoff: (.seconds(1), .seconds(4)),
            logger: Self.quiet,
            clock: .manual(clock)
        )
        try await CommitQueueTests.withRunning(queue) {
            try await queue.submit(StoreBatch(), audit: [CommitQueueTests.entry("before")])
            store.fail(true)
            // Returns without an error: the outcome is held, not lost.
            try await queue.submit(
                StoreBatch(receipts: [Self.receipt("held")]), audit: [CommitQueueTests.entry("held")], ifFailed: .hold)
            #expect(queue.unsavedWrites == 3)
            #expect(queue.isFailing)
            // A write an answer depends on fails, and is not held.
            await #expect(throws: StoreError.self) {
                try await queue.submit(StoreBatch(receipts: [Self.receipt("answer")]))
            }
            #expect(queue.unsavedWrites == 3, "only the held writes are kept")

            // Each failed commit doubles the back-off (1 s, then 2 s): tried again on the clock, without new
            // submissions, and still failing.
            let attempts = store.attempts
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(2))
            await clock.waitForSleepers(1)
            #expect(store.attempts == attempts + 1)
            #expect(queue.unsavedWrites == 3)

            // The store returns: the next attempt, at the longest back-off, writes them.
            store.fail(false)
            clock.advance(by: .seconds(4))
            await clock.waitForSleepers(1)
            #expect(queue.unsavedWrites == 0)
            #expect(!queue.isFailing)
            #expect(try await store.receipts(ids: ["held"], tenantID: "tenant").map(\.id) == ["held"])
            #expect(try await store.receipts(ids: ["answer"], tenantID: "tenant").isEmpty)
        }
        let records = try await store.auditRecords(chain: "relay", after: 0, limit: 10).map(\.record)
        #expect(records.map(\.seq) == [1, 2])
        #expect(records.compactMap(\.detail) == ["before", "held"])
        let verification = try await store.verifyAuditChain("relay", publicKey: key.publicKey, requireSignedEnd: true)
        #expect(verification.isIntact)
    }

    /// Held writes go with the next commit of anyone's writes once the store answers, without waiting for their
    /// back-off.
    @Test func heldWritesGoWithTheNextCommit() async throws {
        let store = TroubledStore()
        let queue = CommitQueue(
            store: store, settings: AuditLogSettings(chain: "relay"), retryBackoff: (.seconds(3600), .seconds(3600)),
            logger: Self.quiet)
        try await CommitQueueTests.withRunning(queue) {
            store.fail(true)
            try await queue.submit(StoreBatch(receipts: [Self.receipt("one")]), ifFailed: .hold)
            try await queue.submit(StoreBatch(receipts: [Self.receipt("two")]), ifFailed: .hold)
            #expect(queue.unsavedWrites == 4)
            store.fail(false)
            try await queue.submit(StoreBatch(receipts: [Self.receipt("three")]))
            #expect(queue.unsavedWrites == 0)
            let stored = try await store.receipts(ids: ["one", "two", "three"], tenantID: "tenant")
            #expect(Set(stored.map(\.id)) == ["one", "two", "three"])
        }
    }

    /// Writes that no commit has taken when their submitter stops waiting are withdrawn: never written, even when
    /// the store later answers. Those a commit has taken are waited for.
    @Test func writesNotTakenInTimeAreWithdrawnAndNeverWritten() async throws {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: .manual(clock))
        let store = TroubledStore()
        let queue = CommitQueue(
            store: store, settings: AuditLogSettings(chain: "relay"), logger: Self.quiet, clock: .manual(clock))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await timer.run() }
            try await CommitQueueTests.withRunning(queue) {
                store.hang()
                // The first commit takes these writes and hangs in the store.
                group.addTask { try await queue.submit(StoreBatch(receipts: [Self.receipt("taken")])) }
                await store.hangingCommitStarted.wait()
                let withdrawn = Task {
                    try await queue.submit(
                        StoreBatch(receipts: [Self.receipt("withdrawn")]),
                        withdrawal: (clock.now + .seconds(5), timer))
                }
                while queue.waitingSubmissions == 0 { await Task.yield() }
                clock.advance(by: .seconds(5))
                await #expect(throws: StoreTimeout.self) { try await withdrawn.value }
                #expect(queue.waitingSubmissions == 0)
                store.release()
            }
            timer.stop()
            try await group.waitForAll()
        }
        #expect(try await store.receipts(ids: ["taken"], tenantID: "tenant").map(\.id) == ["taken"])
        #expect(try await store.receipts(ids: ["withdrawn"], tenantID: "tenant").isEmpty)
    }

    /// Held writes that the store still refuses at shutdown get one last attempt, which lands if it answers then.
    @Test func heldWritesGetALastAttemptAtShutdown() async throws {
        let store = TroubledStore()
        let queue = CommitQueue(
            store: store, settings: AuditLogSettings(chain: "relay"), retryBackoff: (.seconds(3600), .seconds(3600)),
            logger: Self.quiet)
        try await CommitQueueTests.withRunning(queue) {
            store.fail(true)
            try await queue.submit(StoreBatch(receipts: [Self.receipt("late")]), ifFailed: .hold)
            store.fail(false)
        }
        #expect(try await store.receipts(ids: ["late"], tenantID: "tenant").map(\.id) == ["late"])
    }
}
