import Foundation
import RelayCore
import RelayServer
import RelayStore
import RelayStorePostgres
import Testing

@testable import RelayApplication

/// Two relays' registries on one PostgreSQL schema (`RELAY_TEST_POSTGRES_URL`), as `serve` wires them.
@Suite(
    .enabled(if: ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"]?.isEmpty == false),
    .timeLimit(.minutes(1))
)
struct SharedRateLimitPostgresTests {
    let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 100_000, perDevicePerMinute: 2)

    /// Two registries, each with its own store (connection pool) on one schema, take turns at three times the
    /// tenant's rate over a simulated minute: together they stay within 10 % of `rate × time + burst`.
    @Test func twoRegistriesOnOneDatabaseShareATenantsLimits() async throws {
        let url = try #require(ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"])
        var configuration = try PostgresStoreConfiguration(url: url)
        configuration.schema =
            "pushrelay_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        configuration.maximumConnections = 2
        let stores = [PostgresStore(configuration: configuration), PostgresStore(configuration: configuration)]
        for store in stores { store.start() }
        var failure: (any Error)?
        do {
            for store in stores { try await store.migrate() }
            let relays = stores.map { RateLimiterRegistry(leases: $0) }
            let t0 = Date(timeIntervalSince1970: 1_750_000_000)
            let seconds = 60.0
            var admitted = 0
            for step in 0..<Int(seconds * 20) {
                let count = 1 + step % 2
                let decision = try await relays[step % 2].admitShared(
                    tenantID: "tenant-a",
                    limits: limits,
                    count: count,
                    now: t0.addingTimeInterval(Double(step) / 20)
                )
                if case .admitted = decision { admitted += count }
            }
            let allowed = limits.ratePerSecond * seconds + Double(limits.burst)
            #expect(Double(admitted) <= allowed * 1.1)
            #expect(Double(admitted) >= allowed * 0.9)
        } catch {
            failure = error
        }
        try? await stores[0].dropSchema()
        for store in stores { await store.shutdown() }
        if let failure { throw failure }
    }
}
