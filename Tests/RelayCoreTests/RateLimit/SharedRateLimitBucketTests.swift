import Testing

@testable import RelayCore

@Suite struct SharedRateLimitBucketTests {
    let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 1_000, perDevicePerMinute: 30)
    let t0 = 1_750_000_000.0

    func request(_ minimum: Int, _ maximum: Int, at now: Double, limits: RateLimits? = nil) -> RateLimitLeaseRequest {
        RateLimitLeaseRequest(limits: limits ?? self.limits, now: now, minimum: minimum, maximum: maximum)
    }

    @Test func fullBucketGrantsTheMaximum() {
        var bucket = SharedRateLimitBucket()
        let grant = bucket.lease(request(1, 5, at: t0))
        #expect(grant == RateLimitLeaseGrant(granted: 5, theoreticalArrival: t0 + 0.5, day: 20_254, usedToday: 5))
        #expect(bucket == SharedRateLimitBucket(grant))
    }

    @Test func whatFitsIsGrantedWhenItCoversTheMinimum() {
        var bucket = SharedRateLimitBucket()
        #expect(bucket.lease(request(98, 98, at: t0)).granted == 98)
        #expect(bucket.lease(request(1, 5, at: t0)).granted == 2, "two left of the burst")
        #expect(bucket.lease(request(1, 5, at: t0)).granted == 0)
    }

    @Test func refusalTakesNothing() {
        var bucket = SharedRateLimitBucket()
        _ = bucket.lease(request(97, 97, at: t0))
        let before = bucket
        let grant = bucket.lease(request(4, 10, at: t0))
        #expect(grant.granted == 0, "three fit, four are needed")
        #expect(bucket == before)
        #expect(bucket.lease(request(3, 10, at: t0)).granted == 3)
    }

    @Test func bucketRefillsAtTheRate() {
        var bucket = SharedRateLimitBucket()
        _ = bucket.lease(request(100, 100, at: t0))
        #expect(bucket.lease(request(1, 100, at: t0 + 1)).granted == 10)
        #expect(bucket.lease(request(1, 100, at: t0 + 1.25)).granted == 2)
        #expect(bucket.remaining(limits: limits, now: t0 + 11.25) == 100)
        #expect(abs(bucket.secondsUntilFull(now: t0 + 1.25) - 9.95) < 1e-6)
    }

    @Test func singleLeasesAgreeWithGCRA() {
        let limits = RateLimits(ratePerSecond: 3, burst: 7, dailyQuota: 1_000_000, perDevicePerMinute: 1)
        var bucket = SharedRateLimitBucket()
        var gcra = GCRA(rate: limits.ratePerSecond, burst: limits.burst)
        var now = t0
        for step in 0..<500 {
            now += Double(step % 7) * 0.05
            let granted = bucket.lease(request(1, 1, at: now, limits: limits)).granted == 1
            let allowed = if case .allowed = gcra.take(1, now: now) { true } else { false }
            #expect(granted == allowed, "step \(step)")
        }
    }

    @Test func dailyQuotaCapsGrantsUntilTheNextUTCDay() {
        let limits = RateLimits(ratePerSecond: 1_000, burst: 100, dailyQuota: 7, perDevicePerMinute: 1)
        let midnight = (t0 / 86_400).rounded(.up) * 86_400
        var bucket = SharedRateLimitBucket()
        #expect(bucket.lease(request(1, 5, at: midnight - 10, limits: limits)).granted == 5)
        #expect(bucket.lease(request(1, 5, at: midnight - 9, limits: limits)).granted == 2)
        #expect(bucket.lease(request(1, 5, at: midnight - 8, limits: limits)).granted == 0)
        let refusal = bucket.refusal(of: 1, limits: limits, now: midnight - 8)
        #expect(refusal == .init(retryAfter: 8, quotaExhausted: true))
        let nextDay = bucket.lease(request(1, 5, at: midnight + 1, limits: limits))
        #expect(nextDay.granted == 5)
        #expect(nextDay.usedToday == 5)
        #expect(nextDay.day == Int64(midnight / 86_400))
    }

    @Test func whatALeaseReturnsComesOffTheDaysCountNotTheRate() {
        let limits = RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 10, perDevicePerMinute: 1)
        let midnight = (t0 / 86_400).rounded(.up) * 86_400
        var bucket = SharedRateLimitBucket()
        #expect(bucket.lease(request(1, 6, at: midnight - 20, limits: limits)).usedToday == 6)
        var giving = request(1, 1, at: midnight - 10, limits: limits)
        giving.returned = 5
        let grant = bucket.lease(giving)
        #expect(grant.granted == 1)
        #expect(grant.usedToday == 2, "6 - 5 returned + 1")
        #expect(grant.theoreticalArrival == midnight - 10 + 0.1, "the rate keeps what was returned")
        // Never below 0.
        giving.returned = 50
        #expect(bucket.lease(giving).usedToday == 1)
        // Another day's count is not this one's.
        var nextDay = request(1, 1, at: midnight + 1, limits: limits)
        nextDay.returned = 5
        #expect(bucket.lease(nextDay).usedToday == 1)
    }

    @Test func refusalSaysWhenTheRequestFits() {
        var bucket = SharedRateLimitBucket()
        _ = bucket.lease(request(100, 100, at: t0))
        #expect(bucket.refusal(of: 5, limits: limits, now: t0) == .init(retryAfter: 1, quotaExhausted: false))
        #expect(bucket.refusal(of: 25, limits: limits, now: t0) == .init(retryAfter: 3, quotaExhausted: false))
        #expect(bucket.refusal(of: 5, limits: limits, now: t0 + 0.5) == nil)
        #expect(bucket.refusal(of: 101, limits: limits, now: t0 + 100) == .init(retryAfter: 10, quotaExhausted: false))
    }
}
