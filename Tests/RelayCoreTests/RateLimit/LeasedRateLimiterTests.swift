import Testing

@testable import RelayCore

@Suite struct LeasedRateLimiterTests {
    /// Batches of 5 (5 % of the burst), which live 5 s (the time the rate takes to refill ten, at most 5 s).
    let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 1_000, perDevicePerMinute: 30)
    let t0 = 1_750_000_000.0
    var day: Int64 { Int64(t0 / 86_400) }

    /// The lease `step` asks for; records an issue and returns `nil` when it decided on its own.
    func pending(_ step: LeasedRateLimiter.Step, sourceLocation: SourceLocation = #_sourceLocation)
        -> LeasedRateLimiter.PendingLease?
    {
        guard case .lease(let pending) = step else {
            Issue.record("expected a lease, got \(step)", sourceLocation: sourceLocation)
            return nil
        }
        return pending
    }

    func isAdmitted(_ decision: TenantRateLimiter.Decision) -> Bool {
        if case .admitted = decision { true } else { false }
    }

    @Test func policyLeasesSmallBatchesForShortTimes() {
        let policy = LeasedRateLimiter.Policy.standard
        #expect(policy.batchSize(for: limits) == 5)
        #expect(policy.leaseLifetime(for: limits) == 5)
        let fast = RateLimits(ratePerSecond: 1_000, burst: 10, dailyQuota: 1, perDevicePerMinute: 1)
        #expect(policy.batchSize(for: fast) == 1)
        #expect(policy.leaseLifetime(for: fast) == 1)
        let slow = RateLimits(ratePerSecond: 1, burst: 1_000, dailyQuota: 1, perDevicePerMinute: 1)
        #expect(policy.batchSize(for: slow) == 50)
        #expect(policy.leaseLifetime(for: slow) == 5)
    }

    @Test func aLeaseCoversTheRequestAndABatchThenIsSpentLocally() {
        var limiter = LeasedRateLimiter(limits: limits)
        guard let lease = pending(limiter.admit(2, now: t0)) else { return }
        #expect(lease.request == RateLimitLeaseRequest(limits: limits, now: t0, minimum: 2, maximum: 7))
        #expect(lease.reserved.isEmpty)
        var shared = SharedRateLimitBucket()
        let decision = limiter.leaseAnswered(shared.lease(lease.request), lease, now: t0)
        #expect(decision == .admitted(.init(limit: 100, remaining: 98, reset: 1)), "5 held + 93 in the bucket")
        #expect(limiter.held == 5)
        for _ in 0..<5 {
            guard case .decided(.admitted) = limiter.admit(1, now: t0 + 0.1) else {
                Issue.record("a held notification is spent without asking")
                return
            }
        }
        #expect(limiter.held == 0)
        #expect(pending(limiter.admit(1, now: t0 + 0.1)) != nil, "held notifications spent: lease again")
    }

    @Test func heldNotificationsExpireWithTheirLease() {
        var limiter = LeasedRateLimiter(limits: limits)
        var shared = SharedRateLimitBucket()
        guard let lease = pending(limiter.admit(1, now: t0)) else { return }
        _ = limiter.leaseAnswered(shared.lease(lease.request), lease, now: t0)
        #expect(limiter.held == 5)
        guard case .decided(.admitted) = limiter.admit(1, now: t0 + 4.9) else {
            Issue.record("a held notification is spent before its lease expires")
            return
        }
        guard let again = pending(limiter.admit(1, now: t0 + 5)) else { return }
        #expect(again.reserved.isEmpty, "the three left expired")
        #expect(limiter.held == 0)
    }

    @Test func heldNotificationsAreReservedForTheRequestThatLeases() {
        var limiter = LeasedRateLimiter(limits: limits)
        var shared = SharedRateLimitBucket()
        guard let first = pending(limiter.admit(3, now: t0)) else { return }
        _ = limiter.leaseAnswered(shared.lease(first.request), first, now: t0)
        #expect(limiter.held == 5)
        guard let second = pending(limiter.admit(7, now: t0)) else { return }
        #expect(second.request.minimum == 2)
        #expect(second.request.maximum == 7)
        #expect(second.reserved == [.init(count: 5, expires: t0 + 5, day: day)])
        #expect(limiter.held == 0, "reserved, so that concurrent requests do not spend them")

        // Refused: the reservation comes back.
        // Room for half a notification: the two missing fit 0.2 s later.
        let none = RateLimitLeaseGrant(granted: 0, theoreticalArrival: t0 + 9.95, day: first.request.day, usedToday: 99)
        guard case .refused(1, false, _) = limiter.leaseAnswered(none, second, now: t0) else {
            Issue.record("a lease of nothing refuses the request")
            return
        }
        #expect(limiter.held == 5)

        // Granted: reservation and grant pay for the request, the rest is held.
        guard case .decided(.refused) = limiter.admit(7, now: t0 + 0.1) else {
            Issue.record("still refused from the last report")
            return
        }
        guard let third = pending(limiter.admit(7, now: t0 + 0.2)) else { return }
        #expect(third.reserved == [.init(count: 5, expires: t0 + 5, day: day)])
        let grant = RateLimitLeaseGrant(
            granted: 4, theoreticalArrival: t0 + 10.15, day: first.request.day, usedToday: 103)
        #expect(isAdmitted(limiter.leaseAnswered(grant, third, now: t0 + 0.2)))
        #expect(limiter.held == 2, "5 reserved + 4 granted - 7 spent")
    }

    @Test func aFailedLeaseGivesTheReservationBack() {
        var limiter = LeasedRateLimiter(limits: limits)
        var shared = SharedRateLimitBucket()
        guard let first = pending(limiter.admit(1, now: t0)) else { return }
        _ = limiter.leaseAnswered(shared.lease(first.request), first, now: t0)
        guard let second = pending(limiter.admit(9, now: t0)) else { return }
        #expect(limiter.held == 0)
        limiter.leaseFailed(second, now: t0)
        #expect(limiter.held == 5)
    }

    @Test func aKnownRefusalIsAnsweredWithoutAskingAgain() {
        var limiter = LeasedRateLimiter(limits: limits)
        var shared = SharedRateLimitBucket()
        _ = shared.lease(RateLimitLeaseRequest(limits: limits, now: t0, minimum: 100, maximum: 100))
        guard let lease = pending(limiter.admit(10, now: t0)) else { return }
        let answer = limiter.leaseAnswered(shared.lease(lease.request), lease, now: t0)
        #expect(answer == .refused(retryAfter: 1, quotaExhausted: false, .init(limit: 100, remaining: 0, reset: 10)))
        // The bucket only fills with time: until then, refused here.
        #expect(
            limiter.admit(10, now: t0 + 0.5)
                == .decided(.refused(retryAfter: 1, quotaExhausted: false, .init(limit: 100, remaining: 5, reset: 10))))
        #expect(pending(limiter.admit(10, now: t0 + 1)) != nil, "now it may fit: ask")
    }

    @Test func anExhaustedQuotaIsRefusedUntilMidnight() {
        let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 50, perDevicePerMinute: 30)
        var limiter = LeasedRateLimiter(limits: limits)
        let day = Int64(t0 / 86_400)
        guard let lease = pending(limiter.admit(1, now: t0)) else { return }
        let full = RateLimitLeaseGrant(granted: 0, theoreticalArrival: t0, day: day, usedToday: 50)
        let untilMidnight = Int((Double(day + 1) * 86_400 - t0).rounded(.up))
        guard case .refused(untilMidnight, true, _) = limiter.leaseAnswered(full, lease, now: t0) else {
            Issue.record("the quota refuses until midnight UTC")
            return
        }
        guard case .decided(.refused(_, true, _)) = limiter.admit(1, now: t0 + 4.9) else {
            Issue.record("known without asking while a lease may live")
            return
        }
        // Then other relays' leases may have expired and gone back to the day's count: ask again.
        guard let again = pending(limiter.admit(1, now: t0 + 5)) else { return }
        let room = RateLimitLeaseGrant(granted: 1, theoreticalArrival: t0 + 5.1, day: day, usedToday: 50)
        #expect(isAdmitted(limiter.leaseAnswered(room, again, now: t0 + 5)))
        #expect(pending(limiter.admit(1, now: Double(day + 1) * 86_400)) != nil, "a new day: ask")
    }

    @Test func anUnspentLeaseGoesBackToTheDaysQuotaWithTheNextLease() {
        var limiter = LeasedRateLimiter(limits: limits)
        var shared = SharedRateLimitBucket()
        guard let first = pending(limiter.admit(1, now: t0)) else { return }
        #expect(first.request.returned == 0)
        _ = limiter.leaseAnswered(shared.lease(first.request), first, now: t0)
        #expect(shared.usedToday == 6)
        // The 5 held expire at t0 + 5 unspent; the next lease gives them back.
        guard let second = pending(limiter.admit(1, now: t0 + 6)) else { return }
        #expect(second.request.returned == 5)
        _ = limiter.leaseAnswered(shared.lease(second.request), second, now: t0 + 6)
        #expect(shared.usedToday == 7, "2 spent and 5 held")
        // A lease that fails may have been taken by the store: what it returned is not returned again.
        guard let third = pending(limiter.admit(1, now: t0 + 12)) else { return }
        #expect(third.request.returned == 5)
        limiter.leaseFailed(third, now: t0 + 12)
        guard let fourth = pending(limiter.admit(1, now: t0 + 13)) else { return }
        #expect(fourth.request.returned == 0)
    }

    /// A tenant sending one notification every 6 s (each lease outlives its batch) gets its whole quota, where
    /// batches lost unspent would have used it up six times as fast as it sends.
    @Test func aTrickleOfNotificationsGetsTheWholeQuota() {
        let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 60, perDevicePerMinute: 30)
        var limiter = LeasedRateLimiter(limits: limits)
        var shared = SharedRateLimitBucket()
        var admitted = 0
        let start = Double(day) * 86_400 + 3_600
        for step in 0..<100 {
            let now = start + Double(step) * 6
            let decision: TenantRateLimiter.Decision
            switch limiter.admit(1, now: now) {
            case .decided(let decided): decision = decided
            case .lease(let lease): decision = limiter.leaseAnswered(shared.lease(lease.request), lease, now: now)
            }
            if isAdmitted(decision) { admitted += 1 }
        }
        #expect(admitted == 60)
    }

    @Test func moreThanTheBurstIsRefusedAtOnce() {
        var limiter = LeasedRateLimiter(limits: limits)
        guard case .decided(.refused(10, false, _)) = limiter.admit(101, now: t0) else {
            Issue.record("more than the burst never fits")
            return
        }
    }

    /// Two relays take turns at twice the tenant's rate for a minute; the shared bucket keeps their total within
    /// 10 % of what one relay alone would admit (`rate × time + burst`).
    @Test func twoRelaysTogetherStayWithinTheLimits() {
        var shared = SharedRateLimitBucket()
        var relays = [LeasedRateLimiter(limits: limits), LeasedRateLimiter(limits: limits)]
        var admitted = 0
        var leases = 0
        let seconds = 60.0
        let steps = Int(seconds * 100)
        for step in 0..<steps {
            let now = t0 + Double(step) / 100
            let relay = step % 2
            let count = 1 + step % 3
            let decision: TenantRateLimiter.Decision
            switch relays[relay].admit(count, now: now) {
            case .decided(let decided):
                decision = decided
            case .lease(let lease):
                leases += 1
                decision = relays[relay].leaseAnswered(shared.lease(lease.request), lease, now: now)
            }
            if isAdmitted(decision) { admitted += count }
        }
        let allowed = limits.ratePerSecond * seconds + Double(limits.burst)
        #expect(Double(admitted) <= allowed * 1.1)
        #expect(Double(admitted) >= allowed * 0.9)
    }

    /// Two relays share a tenant's traffic below its rate: every request is admitted, mostly from held batches.
    @Test func belowTheRateRelaysAdmitEverythingFromFewLeases() {
        var shared = SharedRateLimitBucket()
        var relays = [LeasedRateLimiter(limits: limits), LeasedRateLimiter(limits: limits)]
        var admitted = 0
        var leases = 0
        // 8 requests per second in all, 4 per relay, for a minute.
        for step in 0..<480 {
            let now = t0 + Double(step) / 8
            let relay = step % 2
            let decision: TenantRateLimiter.Decision
            switch relays[relay].admit(1, now: now) {
            case .decided(let decided):
                decision = decided
            case .lease(let lease):
                leases += 1
                decision = relays[relay].leaseAnswered(shared.lease(lease.request), lease, now: now)
            }
            if isAdmitted(decision) { admitted += 1 }
        }
        #expect(admitted == 480)
        #expect(leases <= 480 / 6 + 2, "one lease per six requests: one needed, a batch of five")
    }
}
