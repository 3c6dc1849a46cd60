import Foundation
import RelayCore
import RelayStore
import Testing

/// The operators' issue's part of the store contract: tenant policy and soft deletion, operator tokens, usage
/// counters and group commits. Runs on every store of ``StoreKind/all``.
@Suite(.timeLimit(.minutes(1)))
struct OperatorConformanceTests {
    @Test(arguments: StoreKind.all)
    func tenantPolicyFieldsRoundTrip(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var tenant = Fixture.tenant("a")
            tenant.allowedProviders = [.apns, .expo]
            tenant.criticalChannel = "pager"
            tenant.note = "ops@example.com, ticket 42"
            try await store.createTenant(tenant)
            #expect(try await store.tenant(id: tenant.id) == tenant)

            tenant.allowedProviders = []
            tenant.criticalChannel = nil
            tenant.note = nil
            tenant.deletedAt = Fixture.date(60)
            try await store.updateTenant(tenant)
            let stored = try #require(try await store.tenant(named: "a"))
            #expect(stored == tenant)
            #expect(stored.isDeleted)
            #expect(stored.allows(.fcm) == false)
        }
    }

    @Test(arguments: StoreKind.all)
    func everyProviderIsAllowedWhenNoneAreNamed(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTenant(Fixture.tenant("a"))
            let stored = try #require(try await store.tenant(named: "a"))
            #expect(stored.allowedProviders == nil)
            #expect(Provider.allCases.allSatisfy(stored.allows))
        }
    }

    @Test(arguments: StoreKind.all)
    func operatorsAreCreatedListedAndRevoked(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let alice = OperatorRecord(
                id: "op1",
                name: "alice",
                role: .admin,
                secretHash: [1, 2, 3],
                createdAt: Fixture.t0
            )
            let bob = OperatorRecord(
                id: "op2",
                name: "bob",
                role: .auditor,
                secretHash: [4, 5, 6],
                createdAt: Fixture.date(1)
            )
            try await store.createOperator(bob)
            try await store.createOperator(alice)
            #expect(try await store.operators().map(\.name) == ["alice", "bob"])
            #expect(try await store.operatorRecord(id: "op2") == bob)
            #expect(try await store.operatorRecord(id: "nobody") == nil)

            var revoked = bob
            revoked.revokedAt = Fixture.date(5)
            try await store.updateOperator(revoked)
            #expect(try await store.operatorRecord(id: "op2") == revoked)
            #expect(try await store.operatorRecord(id: "op2")?.isActive == false)
        }
    }

    @Test(arguments: StoreKind.all)
    func takenOperatorNameIsADuplicateAndUnknownOperatorIsNotFound(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createOperator(OperatorRecord(id: "op1", name: "alice", role: .admin, secretHash: [1]))
            let duplicate = await #expect(throws: StoreError.self) {
                try await store.createOperator(
                    OperatorRecord(id: "op9", name: "alice", role: .auditor, secretHash: [2]))
            }
            #expect(duplicate?.kind == .duplicate)
            let missing = await #expect(throws: StoreError.self) {
                try await store.updateOperator(OperatorRecord(id: "op9", name: "x", role: .admin, secretHash: [2]))
            }
            #expect(missing?.kind == .notFound)
        }
    }

    @Test(arguments: StoreKind.all)
    func groupCommitWritesReceiptsUpdatesAndUsageTogether(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.commit(StoreBatch(receipts: [Fixture.receipt("r0")]))
            let day = UsageKey.day(of: Fixture.t0)
            var batch = StoreBatch(
                receipts: [Fixture.receipt("r1"), Fixture.receipt("r2", provider: .fcm)],
                receiptUpdates: [
                    ReceiptUpdate(outcome: .delivered(providerMessageID: "m0"), id: "r0", at: Fixture.date(2))
                ]
            )
            batch.count(UsageCounts(delivered: 2), for: UsageKey(tenantID: "tenant-a", day: day, provider: .apns))
            batch.count(UsageCounts(tokenInvalid: 1), for: UsageKey(tenantID: "tenant-a", day: day, provider: .apns))
            batch.count(UsageCounts(failed: 1), for: UsageKey(tenantID: "tenant-a", day: day, provider: .fcm))
            batch.count(UsageCounts(delivered: 7), for: UsageKey(tenantID: "tenant-b", day: day, provider: .fcm))
            try await store.commit(batch)
            // A second batch adds to the same counters.
            var second = StoreBatch()
            second.count(UsageCounts(rateLimited: 3), for: UsageKey(tenantID: "tenant-a", day: day, provider: .apns))
            try await store.commit(second)

            let receipts = try await store.receipts(ids: ["r0", "r1", "r2"], tenantID: "tenant-a")
            #expect(Set(receipts.map(\.id)) == ["r0", "r1", "r2"])
            #expect(receipts.first { $0.id == "r0" }?.status == .ok)
            #expect(
                try await store.usage(tenantID: "tenant-a", fromDay: day) == [
                    UsageRow(
                        day: day, provider: .apns, counts: UsageCounts(delivered: 2, tokenInvalid: 1, rateLimited: 3)),
                    UsageRow(day: day, provider: .fcm, counts: UsageCounts(failed: 1)),
                ]
            )
        }
    }

    /// Requests refused whole are told apart from the other rate-limited notifications, so that the daily quota,
    /// which counts everything it admitted, can be read back from the day's usage alone.
    @Test(arguments: StoreKind.all)
    func theDailyQuotaCountsEveryNotificationOfTheDayButThoseOfRequestsRefusedWhole(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let day = UsageKey.day(of: Fixture.t0)
            var batch = StoreBatch()
            batch.count(
                UsageCounts(delivered: 2, rejected: 1, rateLimited: 4, accepted: 1, notAdmitted: 3),
                for: UsageKey(tenantID: "t", day: day, provider: .apns))
            batch.count(UsageCounts(tokenInvalid: 1, failed: 1), for: UsageKey(tenantID: "t", day: day, provider: .fcm))
            // The next day, and another tenant, are not today's count of this one.
            batch.count(
                UsageCounts(delivered: 5), for: UsageKey(tenantID: "t", date: Fixture.date(86_400), provider: .fcm))
            batch.count(UsageCounts(delivered: 7), for: UsageKey(tenantID: "other", day: day, provider: .apns))
            try await store.commit(batch)
            var refused = StoreBatch()
            refused.count(
                UsageCounts(rateLimited: 2, notAdmitted: 2), for: UsageKey(tenantID: "t", day: day, provider: .apns))
            try await store.commit(refused)

            #expect(
                try await store.usage(tenantID: "t", fromDay: day).first
                    == UsageRow(
                        day: day, provider: .apns,
                        counts: UsageCounts(delivered: 2, rejected: 1, rateLimited: 6, accepted: 1, notAdmitted: 5))
            )
            // 2 + 1 + (6 - 5) + 1 on APNs, 2 on FCM.
            #expect(try await store.quotaUsed(tenantID: "t", on: Fixture.t0) == 7)
            #expect(try await store.quotaUsed(tenantID: "t", on: Fixture.date(86_400)) == 5)
            #expect(try await store.quotaUsed(tenantID: "nobody", on: Fixture.t0) == 0)
        }
    }

    @Test(arguments: StoreKind.all)
    func aMoveBetweenColumnsIsWrittenThoughItsTotalIsZero(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let key = UsageKey(tenantID: "t", day: UsageKey.day(of: Fixture.t0), provider: .expo)
            var counted = StoreBatch()
            counted.count(UsageCounts(delivered: 2), for: key)
            try await store.commit(counted)
            var moved = StoreBatch()
            moved.count(UsageCounts(delivered: -1, tokenInvalid: 1), for: key)
            #expect(!moved.isEmpty)
            try await store.commit(moved)
            #expect(
                try await store.usage(tenantID: "t", fromDay: key.day).map(\.counts)
                    == [UsageCounts(delivered: 1, tokenInvalid: 1)]
            )
        }
    }

    @Test(arguments: StoreKind.all)
    func thePendingReceiptOfAnExpoTicketIsFoundUntilItsReceiptArrives(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.commit(
                StoreBatch(receipts: [
                    Fixture.receipt("r1", provider: .expo, expoTicketID: "ticket-1"),
                    Fixture.receipt("r2", provider: .expo, status: .ok, expoTicketID: "ticket-2"),
                ]))
            #expect(try await store.pendingReceipt(expoTicketID: "ticket-1")?.id == "r1")
            #expect(try await store.pendingReceipt(expoTicketID: "ticket-2") == nil)
            try await store.closeExpoReceipt(ticketID: "ticket-1", outcome: .delivered(providerMessageID: nil))
            #expect(try await store.pendingReceipt(expoTicketID: "ticket-1") == nil)
        }
    }

    @Test(arguments: StoreKind.all)
    func usageIsReportedFromTheGivenDayOn(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var batch = StoreBatch()
            for (offset, count) in [(0, 1), (1, 2), (2, 3)] {
                let day = UsageKey.day(of: Fixture.date(offset * 86_400))
                batch.count(UsageCounts(delivered: count), for: UsageKey(tenantID: "t", day: day, provider: .expo))
            }
            try await store.commit(batch)
            let fromSecondDay = try await store.usage(tenantID: "t", fromDay: UsageKey.day(of: Fixture.date(86_400)))
            #expect(fromSecondDay.map(\.counts.delivered) == [2, 3])
            #expect(try await store.usage(tenantID: "other", fromDay: "1970-01-01").isEmpty)
        }
    }
}

@Suite
struct UsageKeyTests {
    @Test(arguments: [
        (0.0, "1970-01-01"), (86_399.9, "1970-01-01"), (86_400, "1970-01-02"), (951_782_400, "2000-02-29"),
        (1_750_000_000, "2025-06-15"), (4_107_542_400, "2100-03-01"), (-1, "1969-12-31"),
    ])
    func dayIsTheUTCCalendarDay(seconds: Double, expected: String) {
        #expect(UsageKey.day(of: Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test(arguments: UsageColumn.allCases)
    func eachColumnCountsOneNotification(column: UsageColumn) {
        let counts = UsageCounts(column: column)
        let columns: [UsageColumn: Int] = [
            .delivered: counts.delivered, .tokenInvalid: counts.tokenInvalid, .rejected: counts.rejected,
            .rateLimited: counts.rateLimited, .failed: counts.failed, .accepted: counts.accepted,
        ]
        #expect(columns[column] == 1)
        #expect(counts.total == 1)
    }
}
