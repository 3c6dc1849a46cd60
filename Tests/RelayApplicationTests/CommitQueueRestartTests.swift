import Foundation
import Logging
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication

/// A relay that died without its closing checkpoint (`kill -9`) left its chain's last records unsigned: the next
/// commit queue on the same store signs that head at start, before any interval passes.
@Suite(.timeLimit(.minutes(1)))
struct CommitQueueRestartTests {
    /// A new SQLite store in a folder of its own, removed by `body`'s end.
    static func withSQLiteFile(_ body: (String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relay-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder.appendingPathComponent("relay.db").path)
    }

    /// What the crashed relay wrote: `records` records of chain `relay`, signed (by `key`) up to `signedUpTo` only.
    static func writeCrashedChain(
        to store: SQLiteStore, records: Int, signedUpTo: Int64?, key: AuditSigningKey
    ) async throws -> AuditAnchor {
        var chain = AuditChain(chain: "relay", head: nil)
        var batch = StoreBatch()
        for index in 1...records {
            batch.audit.append(chain.append(CommitQueueTests.entry("before the crash \(index)")))
            if Int64(index) == signedUpTo {
                let head = chain.head
                batch.checkpoints.append(
                    key.checkpoint(
                        chain: "relay", seq: head.seq, link: head.link, time: Date(timeIntervalSince1970: 1_800_000_000)
                    )
                )
            }
        }
        try await store.commit(batch)
        return chain.head
    }

    /// Another instance died with its chain's tail unsigned and its journal entries' leases running out: the
    /// instance that takes its journal over signs that chain's head, and leaves its own alone.
    @Test func aTakeOverSignsTheChainOfTheInstanceWhoseJournalItTook() async throws {
        try await Self.withSQLiteFile { path in
            let key = AuditSigningKey.generate()
            let store = try SQLiteStore(path: path)
            try await store.migrate()
            let head = try await Self.writeCrashedChain(to: store, records: 4, signedUpTo: 1, key: key)
            let admitted = Date(timeIntervalSince1970: 1_800_000_000)
            let orphan = JournalEntry(
                receiptID: "orphan", tenantID: "tenant", createdAt: admitted, deadline: admitted.addingTimeInterval(60),
                attempts: 1, claimedBy: "relay", leaseUntil: admitted, sealed: [1, 2, 3])
            // A journal entry is stored only beside its pending receipt.
            var batch = StoreBatch(receipts: [CommitQueueTests.receipt("orphan")])
            batch.journal = [orphan]
            try await store.commit(batch)

            let clock = ManualClock(date: admitted.addingTimeInterval(120))
            let relay = Relay(
                store: store,
                senders: [:],
                commits: CommitQueue(
                    store: store, settings: AuditLogSettings(chain: "relay-b", signingKey: key), clock: .manual(clock)),
                clock: .manual(clock),
                journal: JournalSettings(instance: "relay-b")
            )
            let resumed = try await relay.resumeJournal(includingOwn: false)
            #expect(resumed.claimed == 1)
            #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [1, head.seq])
            let verification = try await store.verifyAuditChain(
                "relay", publicKey: key.publicKey, requireSignedEnd: true)
            #expect(verification.isIntact)
            #expect(verification.unsignedRecords == 0)
            #expect(try await store.auditCheckpoints(chain: "relay-b").isEmpty)
        }
    }

    @Test func aRestartSignsTheUnsignedTailItsPredecessorLeft() async throws {
        try await Self.withSQLiteFile { path in
            let key = AuditSigningKey.generate()
            let crashed = try SQLiteStore(path: path)
            try await crashed.migrate()
            let head = try await Self.writeCrashedChain(to: crashed, records: 5, signedUpTo: 2, key: key)
            let before = try await crashed.verifyAuditChain("relay", publicKey: key.publicKey)
            #expect(before.isIntact)
            #expect(before.unsignedRecords == 3, "the crash left seqs 3…5 unsigned")

            let store = try SQLiteStore(path: path)
            try await store.migrate()
            let clock = ManualClock()
            let checkpoints = CommitQueueTests.Checkpoints()
            let queue = CommitQueue(
                store: store,
                settings: AuditLogSettings(chain: "relay", signingKey: key, checkpointInterval: .seconds(60)),
                clock: .manual(clock),
                checkpointObserver: { checkpoints.continuation.yield($0) }
            )
            try await CommitQueueTests.withRunning(queue) {
                // The clock stands still: signed at start, not when the interval ends.
                let signed = await checkpoints.next()
                #expect(signed?.seq == head.seq)
                #expect(signed?.link == head.link)
                let verification = try await store.verifyAuditChain(
                    "relay", publicKey: key.publicKey, requireSignedEnd: true)
                #expect(verification.isIntact)
                #expect(verification.lastSignedSeq == 5)
                #expect(verification.unsignedRecords == 0)
                #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [2, 5])

                // The chain goes on after the signed head.
                try await queue.submit(StoreBatch(), audit: [CommitQueueTests.entry("after the restart")])
            }
            #expect(try await store.auditCheckpoints(chain: "relay").map(\.seq) == [2, 5, 6])
            let verification = try await store.verifyAuditChain(
                "relay", publicKey: key.publicKey, requireSignedEnd: true)
            #expect(verification.isIntact)
            #expect(verification.recordsVerified == 6)
        }
    }

    @Test func aHeadAlreadySignedGetsNoSecondCheckpoint() async throws {
        try await Self.withSQLiteFile { path in
            let key = AuditSigningKey.generate()
            let stopped = try SQLiteStore(path: path)
            try await stopped.migrate()
            _ = try await Self.writeCrashedChain(to: stopped, records: 3, signedUpTo: 3, key: key)
            let original = try await stopped.auditCheckpoints(chain: "relay")
            #expect(original.map(\.seq) == [3])

            let store = try SQLiteStore(path: path)
            try await store.migrate()
            let clock = ManualClock()
            let checkpoints = CommitQueueTests.Checkpoints()
            let queue = CommitQueue(
                store: store,
                settings: AuditLogSettings(chain: "relay", signingKey: key, checkpointInterval: .seconds(60)),
                clock: .manual(clock),
                checkpointObserver: { checkpoints.continuation.yield($0) }
            )
            try await CommitQueueTests.withRunning(queue) {
                // The start's signature of seq 3 is committed, and the store keeps the one it had.
                #expect(await checkpoints.next()?.seq == 3)
                let stored = try await store.auditCheckpoints(chain: "relay")
                #expect(stored == original)
            }
            let stored = try await store.auditCheckpoints(chain: "relay")
            #expect(stored == original, "closing had nothing to sign")
        }
    }

    @Test func withoutASigningKeyNothingIsSignedAtStart() async throws {
        try await Self.withSQLiteFile { path in
            let key = AuditSigningKey.generate()
            let store = try SQLiteStore(path: path)
            try await store.migrate()
            _ = try await Self.writeCrashedChain(to: store, records: 3, signedUpTo: nil, key: key)
            let queue = CommitQueue(
                store: store, settings: AuditLogSettings(chain: "relay"), clock: .manual(ManualClock()))
            try await CommitQueueTests.withRunning(queue) {
                try await queue.submit(StoreBatch(), audit: [CommitQueueTests.entry("after the restart")])
            }
            #expect(try await store.auditCheckpoints(chain: "relay").isEmpty)
        }
    }
}

/// Issue 39 item 2: a commit that fails on a conflict never wedges the instance.
@Suite(.timeLimit(.minutes(1)))
struct CommitQueueConflictTests {
    /// Another writer stores the next record of this instance's chain: the commit that collides with it fails, and
    /// the next goes on after it, so the chain keeps growing and verifies.
    @Test func aRecordAnotherWriterStoredDoesNotWedgeTheChain() async throws {
        try await CommitQueueRestartTests.withSQLiteFile { path in
            let store = try SQLiteStore(path: path)
            try await store.migrate()
            let queue = CommitQueue(
                store: store, settings: AuditLogSettings(chain: "relay"),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            try await CommitQueueTests.withRunning(queue) {
                try await queue.submit(StoreBatch(), audit: [CommitQueueTests.entry("mine 1")])
                // The other writer, from the head it reads.
                var other = AuditChain(chain: "relay", head: try await store.auditHead(chain: "relay"))
                try await store.commit(StoreBatch(audit: [other.append(CommitQueueTests.entry("theirs"))]))

                await #expect(throws: (any Error).self) {
                    try await queue.submit(StoreBatch(), audit: [CommitQueueTests.entry("collides")])
                }
                try await queue.submit(StoreBatch(), audit: [CommitQueueTests.entry("mine 2")])
                try await queue.submit(StoreBatch(), audit: [CommitQueueTests.entry("mine 3")])
            }
            let records = try await store.auditRecords(chain: "relay", after: 0, limit: 10).map(\.record)
            #expect(records.compactMap(\.detail) == ["mine 1", "theirs", "mine 2", "mine 3"])
            #expect(try await store.verifyAuditChain("relay", publicKey: nil).isIntact)
        }
    }
}
