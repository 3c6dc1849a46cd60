import Foundation
import Logging
import RelayCore
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication

/// The commit queue on the relay's clock, and what a failed commit does to the audit chain.
@Suite(.timeLimit(.minutes(1)))
struct CommitQueueTests {
    static func entry(_ detail: String) -> AuditEntry {
        AuditEntry(timeMillis: 1_800_000_000_000, event: .admin, actor: "test", detail: detail)
    }

    /// Runs `queue` while `body` submits to it, then closes it and waits for its last commit.
    static func withRunning(_ queue: CommitQueue, _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await queue.run() }
            try await body()
            queue.close()
            try await group.waitForAll()
        }
    }

    /// Checkpoints as the queue stores them, for a test to wait on rather than poll the store.
    final class Checkpoints: Sendable {
        let stream: AsyncStream<AuditCheckpoint>
        let continuation: AsyncStream<AuditCheckpoint>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
        /// The next checkpoint stored.
        func next() async -> AuditCheckpoint? {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
    }

    /// The interval between checkpoints passes on the relay's clock: a test advances it instead of waiting a minute.
    /// Once it has passed, the head is signed even though nothing more arrives.
    @Test func aCheckpointIsSignedOnceTheIntervalHasPassedOnTheClock() async throws {
        let clock = ManualClock()
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let checkpoints = Checkpoints()
        let queue = CommitQueue(
            store: store,
            settings: AuditLogSettings(chain: "relay", signingKey: key, checkpointInterval: .seconds(60)),
            clock: .manual(clock),
            checkpointObserver: { checkpoints.continuation.yield($0) }
        )
        var signedAt: Date?
        try await Self.withRunning(queue) {
            try await queue.submit(StoreBatch(), audit: [Self.entry("1")])
            clock.advance(by: .seconds(59))
            try await queue.submit(StoreBatch(), audit: [Self.entry("2")])
            #expect(try await store.auditCheckpoints(chain: "relay").isEmpty, "the interval has not passed")

            // The writer waits on the clock for the interval's end.
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(1))
            signedAt = clock.date
            #expect(await checkpoints.next()?.seq == 2, "signed while idle")
            #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [2])

            // The interval starts again at that checkpoint.
            clock.advance(by: .seconds(30))
            try await queue.submit(StoreBatch(), audit: [Self.entry("3")])
            #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [2])
        }
        let stored = try await store.auditCheckpoints(chain: "relay")
        // Closing signs where the chain ends, whatever the interval.
        #expect(stored.map(\.seq) == [2, 3])
        #expect(stored.first?.timeMillis == signedAt.map(AuditTime.millis), "stamped with the clock's date")
        let verification = try await store.verifyAuditChain("relay", publicKey: key.publicKey, requireSignedEnd: true)
        #expect(verification.isIntact)
    }

    /// A burst followed by silence: its last records are signed when the interval ends, not at the next traffic or
    /// at shutdown; and once the head is signed, the writer no longer waits on the clock.
    @Test func aBurstsLastRecordsAreSignedWhenTheRelayGoesIdle() async throws {
        let clock = ManualClock()
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let checkpoints = Checkpoints()
        let queue = CommitQueue(
            store: store,
            settings: AuditLogSettings(chain: "relay", signingKey: key, checkpointInterval: .seconds(5)),
            clock: .manual(clock),
            checkpointObserver: { checkpoints.continuation.yield($0) }
        )
        try await Self.withRunning(queue) {
            for index in 1...4 {
                try await queue.submit(StoreBatch(), audit: [Self.entry("burst \(index)")])
            }
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(5))
            let idle = await checkpoints.next()
            #expect(idle?.seq == 4)
            let verification = try await store.verifyAuditChain(
                "relay", publicKey: key.publicKey, requireSignedEnd: true)
            #expect(verification.isIntact, "signed to its end while the queue is still running")
            #expect(verification.unsignedRecords == 0)
            #expect(verification.lastSignedSeq == 4)
        }
        #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [4], "closing had nothing left to sign")
    }

    /// A commit that fails takes its audit records with it, and the chain goes on from the last record stored: the
    /// sequence numbers of the failed records are given to the next ones, so the stored chain has no hole and
    /// verifies. The submitters of the failed commit get the store's error; everyone else's writes land.
    @Test func aFailedCommitLeavesNoGapInTheAuditChain() async throws {
        let store = FailingOnceStore(failingOn: "f1")
        let key = AuditSigningKey.generate()
        let queue = CommitQueue(
            store: store,
            settings: AuditLogSettings(chain: "relay", signingKey: key, checkpointInterval: .zero),
            // The failure is expected: its error line stays out of the test output.
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        var duringResults: [String: Bool] = [:]
        try await Self.withRunning(queue) {
            // Before: two commits that succeed.
            try await queue.submit(StoreBatch(), audit: [Self.entry("b1")])
            try await queue.submit(StoreBatch(), audit: [Self.entry("b2"), Self.entry("b3")])

            try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                // The failing commit: one submitter with two records (and a receipt, which must not land either).
                group.addTask {
                    do {
                        try await queue.submit(
                            StoreBatch(receipts: [Self.receipt("failed")]),
                            audit: [Self.entry("f1"), Self.entry("f2")]
                        )
                        return ("f", true)
                    } catch let error as StoreError {
                        #expect(error == .unavailable("commit fails (test)"))
                        return ("f", false)
                    }
                }
                // During: submitted while the failing commit is in the store, so they go with a later commit.
                await store.failingCommitStarted.wait()
                for name in ["d1", "d2"] {
                    group.addTask {
                        try await queue.submit(StoreBatch(), audit: [Self.entry(name)])
                        return (name, true)
                    }
                }
                store.releaseFailingCommit()
                for try await (name, succeeded) in group { duringResults[name] = succeeded }
            }
            #expect(queue.isFailing == false, "a commit succeeded after the failure")

            // After.
            try await queue.submit(StoreBatch(), audit: [Self.entry("a1")])
        }
        #expect(duringResults == ["f": false, "d1": true, "d2": true])

        let failed = try #require(store.failedBatch)
        #expect(failed.audit.map(\.detail) == ["f1", "f2"])
        #expect(failed.audit.map(\.seq) == [4, 5])

        let stored = try await store.auditRecords(chain: "relay", after: 0, limit: 100).map(\.record)
        #expect(stored.map(\.seq) == Array(1...6), "consecutive, no hole")
        let details = stored.compactMap(\.detail)
        #expect(details.prefix(3) == ["b1", "b2", "b3"])
        #expect(Set(details.dropFirst(3).prefix(2)) == ["d1", "d2"], "the next records take the failed ones' places")
        #expect(details.last == "a1")
        #expect(!details.contains("f1") && !details.contains("f2"))
        #expect(try await store.receipts(ids: ["failed"], tenantID: "tenant").isEmpty)

        let verification = try await store.verifyAuditChain("relay", publicKey: key.publicKey, requireSignedEnd: true)
        #expect(verification.isIntact)
        #expect(verification.recordsVerified == 6)
        #expect(try await store.auditHead(chain: "relay")?.seq == 6)
    }

    static func receipt(_ id: String) -> Receipt {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        return Receipt(
            id: id, tenantID: "tenant", keyID: "key", provider: .apns, tokenFingerprint: "fp", isCritical: false,
            status: .pending, createdAt: date, updatedAt: date, expiresAt: date.addingTimeInterval(3600)
        )
    }
}

/// A memory store whose first commit carrying the audit record with detail `failingOn` waits until the test releases
/// it, then fails and writes nothing; every other call goes to the memory store.
final class FailingOnceStore: ForwardingPushStore {
    let base = MemoryStore()
    let failingOn: String
    /// Fired when the failing commit has reached the store.
    let failingCommitStarted = Signal()
    private let release = Signal()
    private let failed = Mutex<StoreBatch?>(nil)

    init(failingOn detail: String) {
        failingOn = detail
    }

    /// The batch of the commit that failed.
    var failedBatch: StoreBatch? { failed.withLock { $0 } }

    func releaseFailingCommit() { release.fire() }

    func commit(_ batch: StoreBatch) async throws {
        let fails = failed.withLock { failed in
            guard failed == nil, batch.audit.contains(where: { $0.detail == failingOn }) else { return false }
            failed = batch
            return true
        }
        guard fails else { return try await base.commit(batch) }
        failingCommitStarted.fire()
        await release.wait()
        throw StoreError.unavailable("commit fails (test)")
    }
}

/// Fires once; waiting on a fired signal returns at once.
final class Signal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { state in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if fired { continuation.resume() }
        }
    }

    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
