import Foundation
import RelayCore
import RelayServer
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication

/// The shared buckets of several relays, in memory: what PostgreSQL's `rate_limit_buckets` does, by the same pure
/// arithmetic (its agreement with PostgreSQL is checked in `RelayStoreTests`).
final class MemoryLeaseStore: RateLimitLeaseStore {
    private struct State {
        var buckets: [String: SharedRateLimitBucket] = [:]
        var leases = 0
        var failing = false
    }

    private let state = Mutex(State())

    struct Unavailable: Error {}

    var leases: Int { state.withLock { $0.leases } }

    func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

    func leaseRateLimit(tenantID: String, _ request: RateLimitLeaseRequest) async throws -> RateLimitLeaseGrant {
        try state.withLock { state in
            if state.failing { throw Unavailable() }
            state.leases += 1
            return state.buckets[tenantID, default: SharedRateLimitBucket()].lease(request)
        }
    }

    func countBeyondLimits(tenantID: String, day: Int64, count: Int) async throws {
        try state.withLock { state in
            if state.failing { throw Unavailable() }
            state.buckets[tenantID, default: SharedRateLimitBucket()].countBeyondLimits(count, day: day)
        }
    }
}

@Suite struct SharedRateLimitTests {
    let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 100_000, perDevicePerMinute: 2)
    let t0 = Date(timeIntervalSince1970: 1_750_000_000)

    func isAdmitted(_ decision: TenantRateLimiter.Decision) -> Bool {
        if case .admitted = decision { true } else { false }
    }

    /// Two relays take turns at three times the tenant's rate over a simulated minute: together they admit what
    /// one relay alone would (`rate × time + burst`), within 10 %.
    @Test func twoRegistriesShareATenantsLimits() async throws {
        let store = MemoryLeaseStore()
        let relays = [RateLimiterRegistry(leases: store), RateLimiterRegistry(leases: store)]
        #expect(relays.allSatisfy { $0.isShared })
        var admitted = 0
        let seconds = 60.0
        let steps = Int(seconds * 20)
        for step in 0..<steps {
            let now = t0.addingTimeInterval(Double(step) / 20)
            let count = 1 + step % 2
            let decision = try await relays[step % 2].admitShared(
                tenantID: "tenant-a",
                limits: limits,
                count: count,
                now: now
            )
            if isAdmitted(decision) { admitted += count }
        }
        let allowed = limits.ratePerSecond * seconds + Double(limits.burst)
        #expect(Double(admitted) <= allowed * 1.1)
        #expect(Double(admitted) >= allowed * 0.9)
    }

    /// Below the rate, the same two relays admit every request, asking the shared bucket once per batch.
    @Test func belowTheRateTwoRegistriesAdmitEverythingFromFewLeases() async throws {
        let store = MemoryLeaseStore()
        let relays = [RateLimiterRegistry(leases: store), RateLimiterRegistry(leases: store)]
        var admitted = 0
        for step in 0..<480 {
            let now = t0.addingTimeInterval(Double(step) / 8)
            let decision = try await relays[step % 2].admitShared(tenantID: "a", limits: limits, count: 1, now: now)
            if isAdmitted(decision) { admitted += 1 }
        }
        #expect(admitted == 480)
        #expect(store.leases <= 480 / 6 + 2)
    }

    @Test func oneRelayAloneGetsTheWholeBucketAndTenantsDoNotShare() async throws {
        let store = MemoryLeaseStore()
        let relay = RateLimiterRegistry(leases: store)
        for _ in 0..<10 {
            let decision = try await relay.admitShared(tenantID: "a", limits: limits, count: 10, now: t0)
            #expect(isAdmitted(decision))
        }
        let over = try await relay.admitShared(tenantID: "a", limits: limits, count: 1, now: t0)
        #expect(!isAdmitted(over), "the burst of 100 is spent")
        let other = try await relay.admitShared(tenantID: "b", limits: limits, count: 100, now: t0)
        #expect(isAdmitted(other))
    }

    @Test func withoutALeaseStoreTheLimitIsLocal() async throws {
        let shared = RateLimiterRegistry()
        let local = RateLimiterRegistry()
        #expect(!shared.isShared)
        for step in 0..<300 {
            let now = t0.addingTimeInterval(Double(step) / 50)
            let viaShared = try await shared.admitShared(tenantID: "a", limits: limits, count: 1, now: now)
            let viaLocal = local.admit(tenantID: "a", limits: limits, count: 1, now: now)
            #expect(viaShared == viaLocal, "step \(step)")
        }
    }

    @Test func theDeviceLimitStaysLocal() async throws {
        let relay = RateLimiterRegistry(leases: MemoryLeaseStore())
        #expect(isAdmitted(try await relay.admitShared(tenantID: "a", limits: limits, count: 3, now: t0)))
        #expect(relay.admitDevice(tenantID: "a", fingerprint: "fp", now: t0))
        #expect(relay.admitDevice(tenantID: "a", fingerprint: "fp", now: t0))
        #expect(!relay.admitDevice(tenantID: "a", fingerprint: "fp", now: t0), "2 per minute")
        #expect(relay.admitDevice(tenantID: "a", fingerprint: "other", now: t0))
    }

    @Test func aFailingStoreAdmitsNothingUntilItAnswersAgain() async throws {
        let store = MemoryLeaseStore()
        let relay = RateLimiterRegistry(leases: store)
        store.fail(true)
        await #expect(throws: MemoryLeaseStore.Unavailable.self) {
            try await relay.admitShared(tenantID: "a", limits: limits, count: 1, now: t0)
        }
        store.fail(false)
        let decision = try await relay.admitShared(tenantID: "a", limits: limits, count: 100, now: t0)
        #expect(isAdmitted(decision), "nothing was taken by the failed attempt")
    }
}
