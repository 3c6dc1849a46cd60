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

/// Shared buckets in memory whose leases wait, while stalled, until the test answers them in an order it chooses:
/// a database that stopped answering for a while, then takes the queued leases out of order.
final class StallingLeaseStore: RateLimitLeaseStore {
    private struct State {
        var buckets: [String: SharedRateLimitBucket] = [:]
        var stalled = true
        var queued:
            [(
                tenantID: String, request: RateLimitLeaseRequest,
                answer: CheckedContinuation<RateLimitLeaseGrant, Never>
            )] = []
        var leases = 0
    }

    private let state = Mutex(State())

    var queued: Int { state.withLock { $0.queued.count } }
    var leases: Int { state.withLock { $0.leases } }

    func leaseRateLimit(tenantID: String, _ request: RateLimitLeaseRequest) async throws -> RateLimitLeaseGrant {
        await withCheckedContinuation { (continuation: CheckedContinuation<RateLimitLeaseGrant, Never>) in
            let grant = state.withLock { state -> RateLimitLeaseGrant? in
                state.leases += 1
                guard !state.stalled else {
                    state.queued.append((tenantID, request, continuation))
                    return nil
                }
                return state.buckets[tenantID, default: SharedRateLimitBucket()].lease(request)
            }
            if let grant { continuation.resume(returning: grant) }
        }
    }

    /// Ends the stall: the queued leases are evaluated newest first, then later leases at once.
    func answerNewestFirst() {
        let answers = state.withLock { state in
            state.stalled = false
            defer { state.queued = [] }
            return state.queued.reversed().map { queued in
                (queued.answer, state.buckets[queued.tenantID, default: SharedRateLimitBucket()].lease(queued.request))
            }
        }
        for (continuation, grant) in answers { continuation.resume(returning: grant) }
    }

    func countBeyondLimits(tenantID: String, day: Int64, count: Int) async throws {}
}

/// Issue 37 item 2: after a database stall, leases that waited are not refused for a time the bucket has left
/// behind.
@Suite(.timeLimit(.minutes(1)))
struct SharedRateLimitStallTests {
    let limits = RateLimits(ratePerSecond: 10, burst: 20, dailyQuota: 100_000, perDevicePerMinute: 2)

    /// A request admitted at the start of a 10 s stall and one at its end are answered newest first: the older lease,
    /// evaluated at its own time, is behind the bucket the newer one advanced, and is refused; asked again at the time
    /// of its answer, it fits. A tenant far below its rate gets no refusal.
    @Test func leasesAnsweredOutOfOrderAfterAStallAreGranted() async throws {
        let clock = ManualClock()
        let store = StallingLeaseStore()
        let registry = RateLimiterRegistry(leases: store, clock: .manual(clock))
        let t0 = clock.date
        let early = Task { try await registry.admitShared(tenantID: "t", limits: limits, count: 1, now: t0) }
        while store.queued < 1 { await Task.yield() }
        clock.advance(by: .seconds(9))
        let late = Task {
            try await registry.admitShared(tenantID: "t", limits: limits, count: 1, now: t0.addingTimeInterval(9))
        }
        while store.queued < 2 { await Task.yield() }
        clock.advance(by: .seconds(1))
        store.answerNewestFirst()
        let decisions = [try await late.value, try await early.value]
        for decision in decisions {
            guard case .admitted = decision else {
                Issue.record("refused after the stall: \(decision)")
                continue
            }
        }
        #expect(store.leases == 3, "the refused lease was asked again once, at the time of its answer")
    }

    /// Three requests of a tenant lease at once, each for itself and a batch more, from a bucket with room for four:
    /// the first answered takes three, the second one, the third is refused. The batch the first brought back is
    /// held here, unspent: it pays for the third instead of a 429.
    @Test func aLeaseRefusedWhileOthersWereInFlightIsPaidByWhatTheyBroughtBack() async throws {
        let clock = ManualClock()
        let store = StallingLeaseStore()
        let registry = RateLimiterRegistry(
            leases: store, policy: LeasedRateLimiter.Policy(batchFraction: 0.5), clock: .manual(clock))
        let limits = RateLimits(ratePerSecond: 0.01, burst: 4, dailyQuota: 100_000, perDevicePerMinute: 2)
        let now = clock.date
        let requests = (0..<3).map { _ in
            Task { try await registry.admitShared(tenantID: "t", limits: limits, count: 1, now: now) }
        }
        while store.queued < 3 { await Task.yield() }
        store.answerNewestFirst()
        for request in requests {
            guard case .admitted = try await request.value else {
                Issue.record("refused while another lease brought back room")
                continue
            }
        }
        #expect(store.leases == 3, "decided from what is held, without asking the bucket again")
    }

    /// Without a stall, a lease refused for the rate stays refused: the second look happens only after a wait.
    @Test func aPromptRefusalIsNotAskedAgain() async throws {
        let clock = ManualClock()
        let store = StallingLeaseStore()
        store.answerNewestFirst()
        let registry = RateLimiterRegistry(leases: store, clock: .manual(clock))
        let burst = try await registry.admitShared(tenantID: "t", limits: limits, count: 20, now: clock.date)
        guard case .admitted = burst else { return #expect(Bool(false), "the burst fits") }
        let refused = try await registry.admitShared(tenantID: "t", limits: limits, count: 5, now: clock.date)
        guard case .refused = refused else { return #expect(Bool(false), "beyond the burst is refused") }
        #expect(store.leases == 1, "refused from what the bucket reported, without asking again")
    }
}
