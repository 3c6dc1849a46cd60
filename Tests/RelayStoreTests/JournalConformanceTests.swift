import Foundation
import RelayCore
import RelayStore
import Testing

/// The delivery journal's rules (``StoreBatch/journal``, ``PushStore/claimJournal(_:)``), checked against every store.
@Suite(.timeLimit(.minutes(1)))
struct JournalConformanceTests {
    static func entry(
        _ receiptID: String,
        tenantID: String = "tenant-a",
        createdAt: Date = Fixture.t0,
        attempts: Int = 1,
        holder: String = "relay-a",
        leaseUntil: Date = Fixture.date(60),
        sealed: [UInt8] = [1, 2, 3]
    ) -> JournalEntry {
        JournalEntry(
            receiptID: receiptID, tenantID: tenantID, createdAt: createdAt, deadline: Fixture.date(300),
            attempts: attempts, claimedBy: holder, leaseUntil: leaseUntil, sealed: sealed
        )
    }

    /// Pending receipts with their journal entries, in one commit, as a request answered at its deadline writes them.
    static func journal(_ entries: [JournalEntry], in store: any PushStore) async throws {
        try await store.commit(
            StoreBatch(provisionalReceipts: entries.map { Fixture.receipt($0.receiptID) }, journal: entries))
    }

    static func claimAll(_ store: any PushStore, by instance: String, at seconds: Int, own: Bool = false) async throws
        -> [JournalEntry]
    {
        try await store.claimJournal(
            JournalClaim(
                instance: instance, now: Fixture.date(seconds), leaseUntil: Fixture.date(seconds + 60), limit: 100,
                includingOwn: own)
        )
    }

    @Test(arguments: StoreKind.all)
    func anEntryIsKeptOnlyWhileItsReceiptIsPendingWithoutAnExpoTicket(kind: StoreKind) async throws {
        try await kind.withStore { store in
            // Pending: kept, bytes and dates as written.
            let kept = Self.entry("pending", sealed: Array(0...255))
            try await Self.journal([kept], in: store)
            #expect(try await Self.claimAll(store, by: "relay-b", at: 3_600) == [kept])

            // Final first, in an earlier commit or earlier in the same one: never journaled.
            try await store.commit(StoreBatch(receipts: [Fixture.receipt("final-before", status: .ok)]))
            try await store.commit(
                StoreBatch(
                    receipts: [Fixture.receipt("final-same", status: .error)],
                    provisionalReceipts: [Fixture.receipt("final-same")],
                    journal: [Self.entry("final-before"), Self.entry("final-same")]
                )
            )
            // Accepted by Expo (its ticket awaits a receipt): the poller concludes it, not the journal.
            try await store.commit(
                StoreBatch(
                    receipts: [Fixture.receipt("expo", provider: .expo, expoTicketID: "ticket-1")],
                    journal: [Self.entry("expo")]
                )
            )
            // No receipt at all.
            try await store.commit(StoreBatch(journal: [Self.entry("no-receipt")]))
            #expect(try await store.journalStatistics().entries == 1)
        }
    }

    @Test(arguments: StoreKind.all)
    func aTenantsShareOfTheJournalIsCountedApart(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await Self.journal(
                [
                    Self.entry("a"), Self.entry("b", createdAt: Fixture.date(5)),
                    Self.entry("c", tenantID: "tenant-b", createdAt: Fixture.date(9)),
                ],
                in: store)
            #expect(try await store.journalStatistics() == JournalStatistics(entries: 3, oldest: Fixture.t0))
            #expect(
                try await store.journalStatistics(tenantID: "tenant-a")
                    == JournalStatistics(entries: 2, oldest: Fixture.t0))
            #expect(
                try await store.journalStatistics(tenantID: "tenant-b")
                    == JournalStatistics(entries: 1, oldest: Fixture.date(9)))
            #expect(
                try await store.journalStatistics(tenantID: "tenant-c") == JournalStatistics(entries: 0, oldest: nil))
        }
    }

    @Test(arguments: StoreKind.all)
    func theCommitOfTheFinalReceiptDeletesTheEntryWhicheverComesFirst(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await Self.journal([Self.entry("a"), Self.entry("b", createdAt: Fixture.date(5))], in: store)
            #expect(
                try await store.journalStatistics() == JournalStatistics(entries: 2, oldest: Fixture.t0))
            // The job's outcome for `a`, with its deletion.
            try await store.commit(
                StoreBatch(receipts: [Fixture.receipt("a", status: .ok)], journalDeletes: ["a", "unknown"]))
            #expect(
                try await store.journalStatistics() == JournalStatistics(entries: 1, oldest: Fixture.date(5)))
            // A journal write arriving after the outcome (the deadline's commit, late) leaves nothing behind.
            try await store.commit(
                StoreBatch(provisionalReceipts: [Fixture.receipt("a")], journal: [Self.entry("a")]))
            #expect(try await store.journalStatistics().entries == 1)
            // Written again (shutdown journals what it had journaled at the deadline): replaced, not doubled.
            try await store.commit(StoreBatch(journal: [Self.entry("b", attempts: 2, holder: "relay-b")]))
            let claimed = try await Self.claimAll(store, by: "relay-c", at: 3_600)
            #expect(claimed.map(\.receiptID) == ["b"])
            #expect(claimed.first?.attempts == 2)
            #expect(claimed.first?.claimedBy == "relay-b")
            try await store.commit(StoreBatch(journalDeletes: ["b"]))
            #expect(try await store.journalStatistics() == JournalStatistics(entries: 0, oldest: nil))
        }
    }

    @Test(arguments: StoreKind.all)
    func aClaimTakesEndedLeasesOldestFirstAndHoldsThem(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await Self.journal(
                [
                    Self.entry("late", createdAt: Fixture.date(3), leaseUntil: Fixture.date(10)),
                    Self.entry("early", createdAt: Fixture.date(1), leaseUntil: Fixture.date(10)),
                    Self.entry("held", createdAt: Fixture.date(0), leaseUntil: Fixture.date(100)),
                    Self.entry("mine", createdAt: Fixture.date(2), holder: "relay-b", leaseUntil: Fixture.date(100)),
                ],
                in: store
            )
            // At 50 s only the leases that ended are free; at most `limit`, oldest first, as they were stored.
            let first = try await store.claimJournal(
                JournalClaim(instance: "relay-b", now: Fixture.date(50), leaseUntil: Fixture.date(110), limit: 1))
            #expect(first == [Self.entry("early", createdAt: Fixture.date(1), leaseUntil: Fixture.date(10))])
            let rest = try await Self.claimAll(store, by: "relay-b", at: 50)
            #expect(rest.map(\.receiptID) == ["late"])
            #expect(try await Self.claimAll(store, by: "relay-c", at: 50).isEmpty, "held until 110 now")

            // At start an instance takes its own entries too, whatever their leases.
            let own = try await Self.claimAll(store, by: "relay-b", at: 50, own: true)
            #expect(own.map(\.receiptID) == ["early", "mine", "late"])
            // Each claim counts a send: 1 as journaled, 2 after a first claim, 3 after a second.
            #expect(own.map(\.attempts) == [2, 1, 2])
            let after = try await Self.claimAll(store, by: "relay-c", at: 1_000)
            #expect(after.map(\.receiptID) == ["held", "early", "mine", "late"])
            #expect(after.map(\.attempts) == [1, 3, 2, 3])
            #expect(after.map(\.claimedBy) == ["relay-a", "relay-b", "relay-b", "relay-b"])
        }
    }

    @Test(arguments: StoreKind.all)
    func onlyTheHolderRenewsALease(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await Self.journal([Self.entry("a"), Self.entry("b", holder: "relay-b")], in: store)
            let renewed = try await store.renewJournalLeases(
                receiptIDs: ["a", "b", "a", "missing"], instance: "relay-a", until: Fixture.date(500))
            #expect(renewed == 1)
            // `b`'s lease ended at 60 (relay-c now holds it until 160); `a`'s now ends at 500.
            #expect(try await Self.claimAll(store, by: "relay-c", at: 100).map(\.receiptID) == ["b"])
            #expect(try await Self.claimAll(store, by: "relay-d", at: 150).isEmpty)
            #expect(try await Self.claimAll(store, by: "relay-d", at: 500).map(\.receiptID) == ["a", "b"])
        }
    }
}
