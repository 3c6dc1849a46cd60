import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import RelayStorePostgres
import Synchronization
import Testing

@testable import RelayApplication
@testable import RelayServer

/// A relay on a store of the test's choosing (the same file or database as another relay), on a manual clock, with
/// a scripted APNs sender.
struct QuotaRelay {
    let store: any PushStore
    let sender = ScriptedSender(.apns)
    let relay: Relay

    /// - Parameter chain: the relay's audit chain; relays on one database each need their own, as in production.
    init(store: any PushStore, clock: ManualClock, shared: Bool = false, chain: String? = nil) {
        self.store = store
        relay = Relay(
            store: store,
            senders: [.apns: sender],
            commits: chain.map {
                CommitQueue(store: store, settings: AuditLogSettings(chain: $0), clock: .manual(clock))
            },
            rateLimitLeases: shared ? store as? PostgresStore : nil,
            clock: .manual(clock)
        )
    }

    var application: some ApplicationProtocol {
        get throws { try buildApplication(RelayApplicationParts(relay: relay, logger: LogCapture().logger)) }
    }

    static let push = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#

    /// A daily quota of 2, with room in the bucket for far more.
    static let limits = RateLimits(ratePerSecond: 100, burst: 10, dailyQuota: 2, perDevicePerMinute: 30)
}

/// A memory store whose usage can be made to fail, as a store in trouble would.
final class UsageFailingStore: ForwardingPushStore {
    let base = MemoryStore()
    private let failing = Mutex(false)

    func fail(_ fail: Bool) { failing.withLock { $0 = fail } }

    func usage(tenantID: String, fromDay: String) async throws -> [UsageRow] {
        if failing.withLock({ $0 }) { throw StoreError.unavailable("usage is failing (test)") }
        return try await base.usage(tenantID: tenantID, fromDay: fromDay)
    }
}

extension TestClientProtocol {
    /// POSTs `json` to `/v1/push` with the tenant's key.
    func push(key: String, json: String = QuotaRelay.push) async throws -> TestResponse {
        try await post("/v1/push", key: key, json: json)
    }
}

extension TestResponse {
    /// Whether this is the 429 of a used-up daily quota (not of the rate).
    var isDailyQuotaRefusal: Bool {
        status == .tooManyRequests
            && object["errors"]?[0]?["message"]?.stringValue?.contains("daily quota is used up") == true
    }
}

/// The daily quota counts from the store: a relay started again, or on the next day, grants no more than the quota.
///
/// The test closures spell out `async throws`: their only `try`s are inside `#expect`, and without it Swift 6.3
/// takes them for closures that do not throw.
@Suite(.timeLimit(.minutes(1)))
struct DailyQuotaTests {
    /// 2030-01-01T12:00:00Z.
    let noon = Date(timeIntervalSince1970: 1_893_499_200)

    /// A relay with a quota of 2 sends 2 and stops; a new relay on the same SQLite file refuses the third.
    @Test func theDailyQuotaHoldsAcrossARestartOnSQLite() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relay-quota-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("relay.db").path
        let clock = ManualClock(date: noon)

        let before = try SQLiteStore(path: path)
        try await before.migrate()
        let (tenant, key) = try await TestRelay.addTenant(to: before, name: "acme", limits: QuotaRelay.limits)
        let first = QuotaRelay(store: before, clock: clock)
        try await first.application.test(.router) { (client) async throws in
            for _ in 0..<2 {
                #expect(try await client.push(key: key, json: QuotaRelay.push).status == .ok)
            }
            #expect(try await client.push(key: key, json: QuotaRelay.push).isDailyQuotaRefusal)
        }
        #expect(first.sender.sentPushes.count == 2)

        clock.advance(by: .seconds(60))
        let after = try SQLiteStore(path: path)
        try await after.migrate()
        let second = QuotaRelay(store: after, clock: clock)
        try await second.application.test(.router) { (client) async throws in
            let refused = try await client.post("/v1/push", key: key, json: QuotaRelay.push)
            #expect(refused.isDailyQuotaRefusal)
            #expect(refused.headers[.retryAfter] == String(12 * 3600 - 60), "until midnight UTC")
        }
        #expect(second.sender.sentPushes.count == 0)
        // The two refusals are in the usage, apart from what the quota counted.
        let usage = try await after.usage(tenantID: tenant.id, fromDay: UsageKey.day(of: noon))
        #expect(usage.map(\.counts) == [UsageCounts(delivered: 2, rateLimited: 2, notAdmitted: 2)])
        #expect(try await after.quotaUsed(tenantID: tenant.id, on: noon) == 2)
    }

    /// Everything the quota admitted counts after a restart, also what the relay refused itself (a critical alert
    /// the tenant may not send, a device over its limit), as the count in memory did.
    @Test func notificationsRefusedAfterAdmissionCountAcrossARestart() async throws {
        let clock = ManualClock(date: noon)
        let store = MemoryStore()
        try await store.migrate()
        let limits = RateLimits(ratePerSecond: 100, burst: 10, dailyQuota: 4, perDevicePerMinute: 1)
        let (_, key) = try await TestRelay.addTenant(to: store, name: "acme", limits: limits)
        let critical = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x","isCriticalAlert":true}]}"#
        let twice = #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.apnsToken)"],"body":"x"}]}"#
        let first = QuotaRelay(store: store, clock: clock)
        try await first.application.test(.router) { (client) async throws in
            let refusedAlert = try await client.post("/v1/push", key: key, json: critical)
            #expect(refusedAlert.json?["data"]?[0]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
            let overTheDevice = try await client.post("/v1/push", key: key, json: twice)
            #expect(overTheDevice.json?["data"]?[1]?["details"]?["error"] == .string("MessageRateExceeded"))
        }
        #expect(first.sender.sentPushes.count == 1)

        // 3 of 4 used: one more fits, two do not.
        let second = QuotaRelay(store: store, clock: clock)
        try await second.application.test(.router) { (client) async throws in
            #expect(try await client.push(key: key, json: twice).isDailyQuotaRefusal)
            clock.advance(by: .seconds(60))
            #expect(try await client.push(key: key, json: QuotaRelay.push).status == .ok)
            #expect(try await client.push(key: key, json: QuotaRelay.push).isDailyQuotaRefusal)
        }
        #expect(second.sender.sentPushes.count == 1)
    }

    /// The quota renews at midnight UTC: for the relay that used it up, and for one started after midnight.
    @Test func theDailyQuotaRenewsAtMidnightUTC() async throws {
        let clock = ManualClock(date: noon.addingTimeInterval(12 * 3600 - 30))  // 23:59:30
        let store = MemoryStore()
        try await store.migrate()
        let (tenant, key) = try await TestRelay.addTenant(to: store, name: "acme", limits: QuotaRelay.limits)
        let relay = QuotaRelay(store: store, clock: clock)
        try await relay.application.test(.router) { (client) async throws in
            for _ in 0..<2 {
                #expect(try await client.push(key: key, json: QuotaRelay.push).status == .ok)
            }
            let refused = try await client.post("/v1/push", key: key, json: QuotaRelay.push)
            #expect(refused.isDailyQuotaRefusal)
            #expect(refused.headers[.retryAfter] == "30")
            clock.advance(by: .seconds(30))  // 00:00:00, the next day
            for _ in 0..<2 {
                #expect(try await client.push(key: key, json: QuotaRelay.push).status == .ok)
            }
            #expect(try await client.push(key: key, json: QuotaRelay.push).isDailyQuotaRefusal)
        }
        #expect(relay.sender.sentPushes.count == 4)
        let tomorrow = clock.date

        // A relay started the next day counts that day alone.
        clock.advance(by: .seconds(3600))
        let restarted = QuotaRelay(store: store, clock: clock)
        try await restarted.application.test(.router) { (client) async throws in
            #expect(try await client.push(key: key, json: QuotaRelay.push).isDailyQuotaRefusal)
            clock.advance(by: .seconds(23 * 3600))  // 00:00 the day after
            #expect(try await client.push(key: key, json: QuotaRelay.push).status == .ok)
        }
        #expect(try await store.quotaUsed(tenantID: tenant.id, on: tomorrow) == 2)
    }

    /// A store that cannot tell the day's count refuses the tenant's first request of the day (503, nothing sent);
    /// the next request asks again.
    @Test func aStoreThatCannotCountRefusesTheDaysFirstRequest() async throws {
        let clock = ManualClock(date: noon)
        let store = UsageFailingStore()
        let (_, key) = try await TestRelay.addTenant(to: store, name: "acme", limits: QuotaRelay.limits)
        let relay = QuotaRelay(store: store, clock: clock)
        try await relay.application.test(.router) { (client) async throws in
            store.fail(true)
            let refused = try await client.post("/v1/push", key: key, json: QuotaRelay.push)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.object["errors"]?[0]?["code"] == .string("STORE_UNAVAILABLE"))
            store.fail(false)
            #expect(try await client.push(key: key, json: QuotaRelay.push).status == .ok)
            // Seeded: the store is not asked again that day.
            store.fail(true)
            #expect(try await client.push(key: key, json: QuotaRelay.push).status == .ok)
        }
        #expect(relay.sender.sentPushes.count == 2)
    }
}

/// The daily quota of relays sharing a PostgreSQL database (`RELAY_TEST_POSTGRES_URL`): the tenant's row in
/// `rate_limit_buckets` holds the day's count, so two relays, and a relay started again, grant no more than it.
@Suite(
    .enabled(if: ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"]?.isEmpty == false),
    .timeLimit(.minutes(1))
)
struct DailyQuotaPostgresTests {
    let noon = Date(timeIntervalSince1970: 1_893_499_200)

    /// Stores on one fresh schema, started and migrated; the schema is dropped afterwards.
    func withStores(_ count: Int, _ body: ([PostgresStore]) async throws -> Void) async throws {
        let url = try #require(ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"])
        var configuration = try PostgresStoreConfiguration(url: url)
        configuration.schema =
            "pushrelay_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        configuration.maximumConnections = 2
        let stores = (0..<count).map { _ in PostgresStore(configuration: configuration) }
        for store in stores { store.start() }
        var failure: (any Error)?
        do {
            for store in stores { try await store.migrate() }
            try await body(stores)
        } catch {
            failure = error
        }
        try? await stores[0].dropSchema()
        for store in stores { await store.shutdown() }
        if let failure { throw failure }
    }

    /// Two relays on one database share a quota of 2: together they send 2, then both refuse; a third relay,
    /// started later on the same database, refuses too.
    @Test func twoRelaysOnOneDatabaseShareTheDailyQuota() async throws {
        try await withStores(3) { stores in
            let clock = ManualClock(date: noon)
            let (_, key) = try await TestRelay.addTenant(to: stores[0], name: "acme", limits: QuotaRelay.limits)
            let relays = stores.map { QuotaRelay(store: $0, clock: clock, shared: true) }
            try await relays[0].application.test(.router) { (first) async throws in
                try await relays[1].application.test(.router) { (second) async throws in
                    var sent = 0
                    for client in [first, second, first, second] as [any TestClientProtocol] {
                        let response = try await client.post("/v1/push", key: key, json: QuotaRelay.push)
                        if response.status == .ok {
                            sent += 1
                        } else {
                            #expect(response.isDailyQuotaRefusal)
                        }
                    }
                    #expect(sent == 2)
                    // Once leases held by either relay have expired, nothing is left for the day.
                    clock.advance(by: .seconds(10))
                    for client in [first, second] as [any TestClientProtocol] {
                        #expect(try await client.push(key: key, json: QuotaRelay.push).isDailyQuotaRefusal)
                    }
                }
            }
            #expect(relays[0].sender.sentPushes.count + relays[1].sender.sentPushes.count == 2)

            try await relays[2].application.test(.router) { (client) async throws in
                #expect(try await client.push(key: key, json: QuotaRelay.push).isDailyQuotaRefusal)
            }
            #expect(relays[2].sender.sentPushes.isEmpty)
        }
    }

    /// Two relays take turns at a tenant's trickle of one notification every 6 s, so every batch they lease beyond
    /// a request expires unspent: given back with the next lease, it does not use up the quota, which admits exactly
    /// its 20 notifications.
    @Test func batchesLeasedUnspentGoBackToTheDailyQuota() async throws {
        try await withStores(2) { stores in
            let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 20, perDevicePerMinute: 30)
            let relays = stores.map { RateLimiterRegistry(leases: $0) }
            var admitted = 0
            for step in 0..<40 {
                let decision = try await relays[step % 2].admitShared(
                    tenantID: "tenant-a", limits: limits, count: 1, now: noon.addingTimeInterval(Double(step) * 6))
                if case .admitted = decision { admitted += 1 }
            }
            #expect(admitted == 20)
        }
    }
}
