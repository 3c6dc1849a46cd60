import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import RelayStorePostgres
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Critical alerts go beyond the tenant's bucket, daily quota and per-device limit, within its critical reserve
/// (issue 36): an incident storm that used up an install's quota does not silence its next page.
///
/// The tenant: a bucket of 2 that refills fast, a daily quota of 3 and a critical reserve of 7 an hour.
@Suite(.timeLimit(.minutes(1)))
struct CriticalHeadroomTests {
    /// 2030-01-01T12:00:00Z.
    static let noon = Date(timeIntervalSince1970: 1_893_499_200)
    static let limits = RateLimits(
        ratePerSecond: 100, burst: 2, dailyQuota: 3, perDevicePerMinute: 30, criticalReservePerHour: 7)

    static let ordinary = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"Disk 91 % full"}]}"#
    static let critical =
        #"{"messages":[{"to":"\#(TestRelay.apnsToken)","title":"Sev1","body":"DB down","isCriticalAlert":true}]}"#

    /// The first ticket's error code, or its status when it has none.
    static func outcome(_ response: TestResponse) -> String? {
        let ticket = response.json?["data"]?[0]
        return ticket?["details"]?["error"]?.stringValue ?? ticket?["status"]?.stringValue
    }

    static func relay(store: any PushStore, clock: ManualClock, shared: Bool = false) -> QuotaRelay {
        QuotaRelay(store: store, clock: clock, shared: shared)
    }

    /// Quota 3: three ordinary pushes, the fourth refused (429); then the 4th to 10th notifications, critical, are
    /// delivered from the reserve of 7, and the 11th is refused with CriticalReserveExhausted. A relay started again on
    /// the same SQLite file in the same hour refuses the next critical too; the next hour has a new reserve.
    @Test func criticalsGoBeyondTheQuotaUntilTheReserveIsSpentAndItSurvivesARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relay-reserve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("relay.db").path
        let clock = ManualClock(date: Self.noon)

        let before = try SQLiteStore(path: path)
        try await before.migrate()
        let (tenant, key) = try await TestRelay.addTenant(
            to: before, name: "acme", limits: Self.limits, allowCriticalAlerts: true)
        let first = Self.relay(store: before, clock: clock)
        try await first.application.test(.router) { (client) async throws in
            for _ in 0..<3 {
                #expect(try await client.push(key: key, json: Self.ordinary).status == .ok)
                clock.advance(by: .seconds(1))  // the bucket refills; the quota does not
            }
            #expect(try await client.push(key: key, json: Self.ordinary).isDailyQuotaRefusal)
            for number in 4...10 {
                let page = try await client.push(key: key, json: Self.critical)
                #expect(page.status == .ok)
                #expect(Self.outcome(page) == "ok", "critical number \(number)")
            }
            let over = try await client.push(key: key, json: Self.critical)
            #expect(over.status == .ok, "a ticket per notification, not a 429")
            #expect(Self.outcome(over) == "CriticalReserveExhausted")
            #expect(over.json?["data"]?[0]?["details"]?["retryAfter"] == .int(3600 - 3), "to the next UTC hour")
        }
        #expect(first.sender.sentPushes.count == 10)
        #expect(first.sender.sentPushes.suffix(7).allSatisfy { $0.isCritical })
        #expect(
            try await before.criticalReserveUsed(
                tenantID: tenant.id, hour: Int64(Self.noon.timeIntervalSince1970) / 3600) == 7)

        clock.advance(by: .seconds(60))
        let after = try SQLiteStore(path: path)
        try await after.migrate()
        let second = Self.relay(store: after, clock: clock)
        try await second.application.test(.router) { (client) async throws in
            #expect(Self.outcome(try await client.push(key: key, json: Self.critical)) == "CriticalReserveExhausted")
            #expect(try await client.push(key: key, json: Self.ordinary).isDailyQuotaRefusal)
            clock.advance(by: .seconds(3600))
            #expect(Self.outcome(try await client.push(key: key, json: Self.critical)) == "ok")
        }
        #expect(second.sender.sentPushes.count == 1)
        // Criticals count in the usage (and the day's quota went below zero: 3 + 8 of 3).
        let usage = try await after.usage(tenantID: tenant.id, fromDay: UsageKey.day(of: Self.noon))
        #expect(usage.map(\.counts.critical).reduce(0, +) == 10)
    }

    /// A request over the bucket with critical and ordinary notifications: its criticals go out, its others are
    /// refused one by one with TenantRateLimited and when to try again, instead of a 429 for the whole request.
    @Test func aMixedRequestOverTheBucketSendsItsCriticals() async throws {
        let clock = ManualClock(date: Self.noon)
        let store = MemoryStore()
        try await store.migrate()
        let limits = RateLimits(
            ratePerSecond: 0.01, burst: 2, dailyQuota: 100, perDevicePerMinute: 30, criticalReservePerHour: 5)
        let (_, key) = try await TestRelay.addTenant(to: store, name: "acme", limits: limits, allowCriticalAlerts: true)
        let relay = Self.relay(store: store, clock: clock)
        let mixed =
            #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"routine"},{"to":"\#(TestRelay.apnsToken)","body":"Sev1","isCriticalAlert":true}]}"#
        try await relay.application.test(.router) { (client) async throws in
            let two = #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.apnsToken)"],"body":"x"}]}"#
            #expect(try await client.push(key: key, json: two).status == .ok)
            #expect(try await client.push(key: key, json: Self.ordinary).status == .tooManyRequests)
            let response = try await client.push(key: key, json: mixed)
            #expect(response.status == .ok)
            let tickets = response.json?["data"]
            #expect(tickets?[0]?["details"]?["error"] == .string("TenantRateLimited"))
            #expect((tickets?[0]?["details"]?["retryAfter"]?.integerValue ?? 0) >= 1)
            #expect(tickets?[1]?["status"] == .string("ok"))
        }
        #expect(relay.sender.sentPushes.count == 3)
        #expect(relay.sender.sentPushes.last?.isCritical == true)
    }

    /// A tenant not allowed critical alerts gets no headroom: its critical is refused as before, and a request of
    /// criticals over its bucket is a 429.
    @Test func noHeadroomWithoutThePermission() async throws {
        let clock = ManualClock(date: Self.noon)
        let store = MemoryStore()
        try await store.migrate()
        let (_, key) = try await TestRelay.addTenant(to: store, name: "acme", limits: Self.limits)
        let relay = Self.relay(store: store, clock: clock)
        try await relay.application.test(.router) { (client) async throws in
            #expect(Self.outcome(try await client.push(key: key, json: Self.critical)) == "CriticalAlertsNotAllowed")
        }
        #expect(relay.sender.sentPushes.isEmpty)
    }

    /// The OneUptime route answers a spent reserve with 422 and `CriticalReserveExhausted`.
    @Test func oneUptimeSeesTheReserveSpent() async throws {
        let clock = ManualClock(date: Self.noon)
        let store = MemoryStore()
        try await store.migrate()
        let limits = RateLimits(
            ratePerSecond: 100, burst: 2, dailyQuota: 0, perDevicePerMinute: 30, criticalReservePerHour: 1)
        let (_, key) = try await TestRelay.addTenant(to: store, name: "acme", limits: limits, allowCriticalAlerts: true)
        let relay = Self.relay(store: store, clock: clock)
        let page =
            #"{"to":"\#(TestRelay.apnsToken)","title":"Incident","body":"down","isCriticalAlert":true}"#
        try await relay.application.test(.router) { (client) async throws in
            #expect(try await client.post("/push-relay/send", key: key, json: page).status == .ok)
            let refused = try await client.post("/push-relay/send", key: key, json: page)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.object["details"]?["error"] == .string("CriticalReserveExhausted"))
        }
        #expect(relay.sender.sentPushes.count == 1)
    }

    /// Critical alerts to one device have their own per-device limit (`[limits] critical_per_device_per_minute`,
    /// 10), apart from the tenant's: a device that ordinary pushes used up still gets its pages.
    @Test func criticalsHaveTheirOwnPerDeviceLimit() async throws {
        let clock = ManualClock(date: Self.noon)
        let store = MemoryStore()
        try await store.migrate()
        let limits = RateLimits(
            ratePerSecond: 1000, burst: 100, dailyQuota: 1000, perDevicePerMinute: 1, criticalReservePerHour: 100)
        let (_, key) = try await TestRelay.addTenant(to: store, name: "acme", limits: limits, allowCriticalAlerts: true)
        let relay = Self.relay(store: store, clock: clock)
        try await relay.application.test(.router) { (client) async throws in
            #expect(Self.outcome(try await client.push(key: key, json: Self.ordinary)) == "ok")
            #expect(Self.outcome(try await client.push(key: key, json: Self.ordinary)) == "MessageRateExceeded")
            for _ in 0..<10 {
                #expect(Self.outcome(try await client.push(key: key, json: Self.critical)) == "ok")
            }
            #expect(Self.outcome(try await client.push(key: key, json: Self.critical)) == "MessageRateExceeded")
        }
        #expect(relay.sender.sentPushes.count == 11)
    }
}

/// The critical reserve of relays sharing a PostgreSQL database is one: together they send no more than it.
@Suite(
    .enabled(if: ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"]?.isEmpty == false),
    .timeLimit(.minutes(1))
)
struct CriticalHeadroomPostgresTests {
    @Test func twoRelaysShareTheCriticalReserve() async throws {
        try await DailyQuotaPostgresTests().withStores(2) { stores in
            let clock = ManualClock(date: CriticalHeadroomTests.noon)
            let limits = RateLimits(
                ratePerSecond: 100, burst: 2, dailyQuota: 0, perDevicePerMinute: 30, criticalReservePerHour: 3)
            let (_, key) = try await TestRelay.addTenant(
                to: stores[0], name: "acme", limits: limits, allowCriticalAlerts: true)
            // Each relay writes its own audit chain (the refusals are committed before they are answered).
            let relays = stores.indices.map {
                QuotaRelay(store: stores[$0], clock: clock, shared: true, chain: "relay-\($0)")
            }
            try await relays[0].application.test(.router) { (first) async throws in
                try await relays[1].application.test(.router) { (second) async throws in
                    var outcomes: [String?] = []
                    for client in [first, second, first, second, first] as [any TestClientProtocol] {
                        let response = try await client.post(
                            "/v1/push", key: key, json: CriticalHeadroomTests.critical)
                        outcomes.append(CriticalHeadroomTests.outcome(response))
                    }
                    #expect(outcomes == ["ok", "ok", "ok", "CriticalReserveExhausted", "CriticalReserveExhausted"])
                }
            }
            #expect(relays[0].sender.sentPushes.count + relays[1].sender.sentPushes.count == 3)
        }
    }
}

/// Critical alerts sent beyond the bucket count in the day's quota of relays that share their limits: the shared
/// bucket's day count has them, so another relay's ordinary pushes wait for the next day.
@Suite(.timeLimit(.minutes(1)))
struct CriticalsInTheSharedQuotaTests {
    static let limits = RateLimits(ratePerSecond: 100, burst: 10, dailyQuota: 5, perDevicePerMinute: 30)

    static func check(_ stores: [any RateLimitLeaseStore]) async throws {
        let noon = CriticalHeadroomTests.noon
        let first = RateLimiterRegistry(leases: stores[0])
        let second = RateLimiterRegistry(leases: stores[stores.count - 1])
        try await first.countCritical(tenantID: "tenant-a", limits: limits, count: 5, now: noon)
        let refused = try await second.admitShared(tenantID: "tenant-a", limits: limits, count: 1, now: noon)
        guard case .refused(_, let quotaExhausted, _) = refused else {
            Issue.record("admitted beyond a quota the criticals used up: \(refused)")
            return
        }
        #expect(quotaExhausted)
        // Another tenant, and the next day, are their own.
        let other = try await second.admitShared(tenantID: "tenant-b", limits: limits, count: 1, now: noon)
        #expect(other.isAdmitted)
        let tomorrow = try await second.admitShared(
            tenantID: "tenant-a", limits: limits, count: 1, now: noon.addingTimeInterval(86_400))
        #expect(tomorrow.isAdmitted)
    }

    @Test func inTheModel() async throws {
        try await Self.check([MemoryLeaseStore()])
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"]?.isEmpty == false))
    func onPostgreSQL() async throws {
        try await DailyQuotaPostgresTests().withStores(2) { stores in
            try await Self.check(stores)
        }
    }
}

extension TenantRateLimiter.Decision {
    fileprivate var isAdmitted: Bool {
        if case .admitted = self { true } else { false }
    }
}
