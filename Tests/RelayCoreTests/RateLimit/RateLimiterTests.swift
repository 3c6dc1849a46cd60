import Testing

@testable import RelayCore

@Suite struct GCRATests {
    @Test func burstIsAvailableAtOnceThenTheRate() {
        var bucket = GCRA(rate: 10, burst: 5)
        let first = (0..<5).map { _ in bucket.take(1, now: 100) }
        #expect(first.allSatisfy { if case .allowed = $0 { true } else { false } })
        guard case .denied(let wait) = bucket.take(1, now: 100) else {
            Issue.record("the sixth cell fits a burst of five")
            return
        }
        #expect(abs(wait - 0.1) < 1e-6)
        let later = bucket.take(1, now: 100.1)
        #expect(later == .allowed(remaining: 0))
    }

    @Test func refusalTakesNothing() {
        var bucket = GCRA(rate: 1, burst: 10)
        let decisions = [bucket.take(8, now: 0), bucket.take(5, now: 0), bucket.take(2, now: 0)]
        #expect(decisions == [.allowed(remaining: 2), .denied(retryAfter: 3), .allowed(remaining: 0)])
    }

    @Test func moreThanTheBurstNeverFits() {
        var bucket = GCRA(rate: 100, burst: 10)
        let decision = bucket.take(11, now: 0)
        #expect(decision == .denied(retryAfter: .infinity))
    }

    @Test func bucketRefillsOverTime() {
        var bucket = GCRA(rate: 2, burst: 4)
        _ = bucket.take(4, now: 0)
        #expect(bucket.remaining(now: 1) == 2)
        #expect(bucket.secondsUntilFull(now: 1) == 1)
        #expect(bucket.isIdle(now: 2))
    }
}

@Suite struct TenantRateLimiterTests {
    let limits = RateLimits(ratePerSecond: 10, burst: 20, dailyQuota: 50, perDevicePerMinute: 3)

    @Test func requestIsAdmittedOrRefusedWhole() {
        var limiter = TenantRateLimiter(limits: limits)
        guard case .admitted(let status) = limiter.admit(15, now: 1000) else {
            Issue.record("15 of a burst of 20 must fit")
            return
        }
        #expect(status == .init(limit: 20, remaining: 5, reset: 2))
        // 10 more do not fit; nothing is taken, so 5 still do.
        guard case .refused(let retry, false, _) = limiter.admit(10, now: 1000) else {
            Issue.record("10 more must be refused")
            return
        }
        #expect(retry == 1)
        let rest = limiter.admit(5, now: 1000)
        #expect(rest == .admitted(.init(limit: 20, remaining: 0, reset: 2)))
    }

    @Test func dailyQuotaRefusesUntilMidnightUTC() {
        var limiter = TenantRateLimiter(limits: limits)
        let morning = 86_400.0 * 20_000 + 3600  // 01:00 UTC
        let spread = (0..<5).map { minute in limiter.admit(10, now: morning + Double(minute) * 60) }
        #expect(spread.allSatisfy { if case .admitted = $0 { true } else { false } })
        guard case .refused(let retry, true, let status) = limiter.admit(1, now: morning + 600) else {
            Issue.record("the 51st notification of the day must be refused by the quota")
            return
        }
        #expect(retry == 86_400 - 3600 - 600)
        #expect(status.remaining == 0)
        // A new UTC day starts a new quota.
        guard case .admitted = limiter.admit(10, now: 86_400.0 * 20_001 + 1) else {
            Issue.record("a new day must admit again")
            return
        }
    }

    @Test func aSeededQuotaStartsTheDayFromWhatWasUsedBefore() {
        var limiter = TenantRateLimiter(limits: limits)
        let noon = 86_400.0 * 20_000 + 43_200
        #expect(!limiter.knowsQuota(at: noon))
        limiter.seedQuota(used: 45, now: noon)
        #expect(limiter.knowsQuota(at: noon))
        #expect(limiter.knowsQuota(at: noon - 43_200), "the whole UTC day")
        #expect(!limiter.knowsQuota(at: noon + 43_200), "not the next one")
        guard case .admitted(let status) = limiter.admit(5, now: noon) else {
            Issue.record("45 used and 5 more fit a quota of 50")
            return
        }
        #expect(status.remaining == 0)
        guard case .refused(_, true, _) = limiter.admit(1, now: noon + 1) else {
            Issue.record("the 51st notification of the day must be refused by the quota")
            return
        }
        // A second seed of the same day (one read concurrently) does not undo what was admitted since the first.
        limiter.seedQuota(used: 45, now: noon + 2)
        guard case .refused(_, true, _) = limiter.admit(1, now: noon + 3) else {
            Issue.record("a late seed must not give the day's quota back")
            return
        }
        // The next day is seeded from its own count.
        let tomorrow = noon + 86_400
        limiter.seedQuota(used: 49, now: tomorrow)
        #expect(limiter.admit(1, now: tomorrow) == .admitted(.init(limit: 20, remaining: 0, reset: 1)))
        guard case .refused(_, true, _) = limiter.admit(1, now: tomorrow + 60) else {
            Issue.record("49 seeded and 1 admitted use up a quota of 50")
            return
        }
    }

    @Test func aSeedAboveTheQuotaRefusesTheDay() {
        var limiter = TenantRateLimiter(limits: limits)
        let morning = 86_400.0 * 20_000 + 3600
        // The quota was lowered after the day's notifications were sent.
        limiter.seedQuota(used: 80, now: morning)
        guard case .refused(let retry, true, let status) = limiter.admit(1, now: morning) else {
            Issue.record("a day already over the quota must be refused")
            return
        }
        #expect(retry == 86_400 - 3600)
        #expect(status.remaining == 0)
    }

    @Test func deviceLimitCatchesRunawayLoops() {
        var limiter = TenantRateLimiter(limits: limits)
        let admitted = (0..<5).map { _ in limiter.admitDevice("fp-1", now: 500) }
        #expect(admitted == [true, true, true, false, false])
        let other = limiter.admitDevice("fp-2", now: 500)
        #expect(other, "other devices are not affected")
        let later = limiter.admitDevice("fp-1", now: 520)
        #expect(later, "one more after a third of a minute")
    }

    @Test func idleDeviceBucketsAreForgotten() {
        var limiter = TenantRateLimiter(limits: limits)
        for device in 0..<100 { _ = limiter.admitDevice("fp-\(device)", now: 0) }
        #expect(limiter.trackedDevices == 100)
        _ = limiter.admitDevice("fp-new", now: 120)
        #expect(limiter.trackedDevices == 1)
    }

    @Test func manyDevicesKeepTheirOwnBuckets() {
        // Devices are kept under a hash of their fingerprint: 50,000 of them at 2 a minute must not share a bucket.
        var limiter = TenantRateLimiter(
            limits: RateLimits(ratePerSecond: 1_000_000, burst: 1_000_000, perDevicePerMinute: 2))
        let devices = (0..<50_000).map { "fingerprint-\($0)" }
        let first = devices.filter { limiter.admitDevice($0, now: 1_000) }.count
        let second = devices.filter { limiter.admitDevice($0, now: 1_000) }.count
        let third = devices.filter { limiter.admitDevice($0, now: 1_000) }.count
        #expect(first == 50_000 && second == 50_000)
        #expect(third == 0, "each device's third push within the minute is refused")
        #expect(limiter.trackedDevices == 50_000)
        // An update of the per-device limit starts every device afresh under it.
        limiter.update(RateLimits(ratePerSecond: 1_000_000, burst: 1_000_000, perDevicePerMinute: 3))
        #expect(limiter.trackedDevices == 0)
        #expect(devices.prefix(100).filter { limiter.admitDevice($0, now: 1_000) }.count == 100)
    }
}
