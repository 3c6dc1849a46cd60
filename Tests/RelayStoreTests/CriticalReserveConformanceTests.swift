import Foundation
import RelayCore
import RelayStore
import Testing

/// The critical reserve's counts (``PushStore/takeCriticalReserve(tenantID:hour:count:limit:)``), each tenant's
/// `criticalReservePerHour` and usage's `critical` column, checked against every store.
@Suite(.timeLimit(.minutes(1)))
struct CriticalReserveConformanceTests {
    /// An hour of 2025 (UNIX seconds / 3600).
    static let hour: Int64 = 486_111

    @Test(arguments: StoreKind.all)
    func reserveGivesUpToItsLimitExactly(kind: StoreKind) async throws {
        try await kind.withStore { store in
            #expect(try await store.criticalReserveUsed(tenantID: "t", hour: Self.hour) == 0)
            var granted: [Int] = []
            for _ in 0..<12 {
                granted.append(try await store.takeCriticalReserve(tenantID: "t", hour: Self.hour, count: 1, limit: 10))
            }
            #expect(granted == Array(repeating: 1, count: 10) + [0, 0])
            #expect(try await store.criticalReserveUsed(tenantID: "t", hour: Self.hour) == 10)
        }
    }

    @Test(arguments: StoreKind.all)
    func partOfARequestIsGrantedWhenOnlyPartFits(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var granted: [Int] = []
            for count in [4, 5, 3, 3] {
                granted.append(
                    try await store.takeCriticalReserve(tenantID: "t", hour: Self.hour, count: count, limit: 10))
            }
            #expect(granted == [4, 5, 1, 0])
            // A limit raised within the hour gives the difference; one lowered below what was taken gives nothing.
            let raised = try await store.takeCriticalReserve(tenantID: "t", hour: Self.hour, count: 5, limit: 12)
            let lowered = try await store.takeCriticalReserve(tenantID: "t", hour: Self.hour, count: 5, limit: 3)
            #expect((raised, lowered) == (2, 0))
            #expect(try await store.criticalReserveUsed(tenantID: "t", hour: Self.hour) == 12)
        }
    }

    @Test(arguments: StoreKind.all)
    func nothingAskedOrNothingAllowedTakesNothing(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let none = try await store.takeCriticalReserve(tenantID: "t", hour: Self.hour, count: 0, limit: 10)
            let closed = try await store.takeCriticalReserve(tenantID: "t", hour: Self.hour, count: 3, limit: 0)
            #expect((none, closed) == (0, 0))
            #expect(try await store.criticalReserveUsed(tenantID: "t", hour: Self.hour) == 0)
        }
    }

    @Test(arguments: StoreKind.all)
    func eachTenantAndHourHasItsOwnReserve(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let next = Self.hour + 1
            let takes: [(tenant: String, hour: Int64, count: Int)] = [
                ("a", Self.hour, 5), ("a", Self.hour, 1), ("b", Self.hour, 3), ("a", next, 2),
            ]
            var granted: [Int] = []
            for take in takes {
                granted.append(
                    try await store.takeCriticalReserve(
                        tenantID: take.tenant, hour: take.hour, count: take.count, limit: 5))
            }
            #expect(granted == [5, 0, 3, 2])
            var used: [Int] = []
            for (tenant, hour) in [("a", Self.hour), ("b", Self.hour), ("a", next), ("b", next)] {
                used.append(try await store.criticalReserveUsed(tenantID: tenant, hour: hour))
            }
            #expect(used == [5, 3, 2, 0])
        }
    }

    /// A tenant's first take of an hour deletes its counts of hours more than 48 before; nothing that can still be
    /// asked for, and no other tenant's.
    @Test(arguments: StoreKind.all)
    func oldHoursGoWhenATenantTakesAgain(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let retention = MemoryStore.criticalReserveRetentionHours
            let (old, kept) = (Self.hour - retention - 1, Self.hour - retention)
            var granted: [Int] = []
            for (tenant, hour) in [("a", old), ("a", kept), ("b", old), ("a", Self.hour)] {
                granted.append(try await store.takeCriticalReserve(tenantID: tenant, hour: hour, count: 1, limit: 5))
            }
            #expect(granted == [1, 1, 1, 1])
            var used: [Int] = []
            for (tenant, hour) in [("a", old), ("a", kept), ("b", old)] {
                used.append(try await store.criticalReserveUsed(tenantID: tenant, hour: hour))
            }
            #expect(used == [0, 1, 1])
        }
    }

    @Test(arguments: StoreKind.all)
    func concurrentTakesNeverExceedTheLimit(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let granted = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await store.takeCriticalReserve(
                            tenantID: "busy", hour: Self.hour, count: 1 + index % 3, limit: 50)
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(granted == 50, "79 asked for at once, 50 to give")
            #expect(try await store.criticalReserveUsed(tenantID: "busy", hour: Self.hour) == 50)
        }
    }

    // MARK: - The tenant's setting

    @Test(arguments: StoreKind.all)
    func tenantsKeepTheirCriticalReserve(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let limits = RateLimits(
                ratePerSecond: 2, burst: 3, dailyQuota: 4, perDevicePerMinute: 5, criticalReservePerHour: 7)
            var tenant = Tenant(id: "tenant-1", name: "acme", limits: limits, createdAt: Fixture.t0)
            try await store.createTenant(tenant)
            try await store.createTenant(Fixture.tenant("default"))
            #expect(try await store.tenant(id: "tenant-1")?.limits.criticalReservePerHour == 7)
            #expect(try await store.tenant(named: "default")?.limits.criticalReservePerHour == 120)
            tenant.limits.criticalReservePerHour = 0
            try await store.updateTenant(tenant)
            #expect(try await store.tenant(id: "tenant-1") == tenant)
            #expect(try await store.tenants().map(\.limits.criticalReservePerHour) == [0, 120])
        }
    }

    // MARK: - Usage

    /// `critical` adds up like the other columns but is not one of them: `total` and the daily quota leave it out.
    @Test(arguments: StoreKind.all)
    func usageCountsCriticalNotificationsApart(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let day = UsageKey.day(of: Fixture.t0)
            let key = UsageKey(tenantID: "tenant-a", day: day, provider: .apns)
            var batch = StoreBatch()
            batch.count(UsageCounts(delivered: 3, critical: 2), for: key)
            batch.count(UsageCounts(failed: 1, critical: 1), for: key)
            try await store.commit(batch)
            var again = StoreBatch()
            again.count(UsageCounts(rateLimited: 1, critical: 1), for: key)
            try await store.commit(again)
            let rows = try await store.usage(tenantID: "tenant-a", fromDay: day)
            #expect(
                rows == [
                    UsageRow(
                        day: day, provider: .apns,
                        counts: UsageCounts(delivered: 3, rateLimited: 1, failed: 1, critical: 4))
                ])
            #expect(rows.first?.counts.total == 5)
            #expect(try await store.quotaUsed(tenantID: "tenant-a", on: Fixture.t0) == 5)
        }
    }
}
