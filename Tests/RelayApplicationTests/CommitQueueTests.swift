import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication

/// The commit queue on the relay's clock.
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

    /// The interval between checkpoints passes on the relay's clock: a test advances it instead of waiting a minute.
    @Test func aCheckpointIsSignedOnceTheIntervalHasPassedOnTheClock() async throws {
        let clock = ManualClock()
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let queue = CommitQueue(
            store: store,
            settings: AuditLogSettings(chain: "relay", signingKey: key, checkpointInterval: .seconds(60)),
            clock: .manual(clock)
        )
        var signedAt: Date?
        try await Self.withRunning(queue) {
            try await queue.submit(StoreBatch(), audit: [Self.entry("1")])
            clock.advance(by: .seconds(59))
            try await queue.submit(StoreBatch(), audit: [Self.entry("2")])
            #expect(try await store.auditCheckpoints(chain: "relay").isEmpty, "the interval has not passed")

            clock.advance(by: .seconds(1))
            signedAt = clock.date
            try await queue.submit(StoreBatch(), audit: [Self.entry("3")])
            #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [3])

            // The interval starts again at that checkpoint.
            clock.advance(by: .seconds(30))
            try await queue.submit(StoreBatch(), audit: [Self.entry("4")])
            #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [3])
        }
        let checkpoints = try await store.auditCheckpoints(chain: "relay")
        // Closing signs where the chain ends, whatever the interval.
        #expect(checkpoints.map(\.seq) == [3, 4])
        #expect(checkpoints.first?.timeMillis == signedAt.map(AuditTime.millis), "stamped with the clock's date")
        let verification = try await store.verifyAuditChain("relay", publicKey: key.publicKey, requireSignedEnd: true)
        #expect(verification.isIntact)
    }
}
