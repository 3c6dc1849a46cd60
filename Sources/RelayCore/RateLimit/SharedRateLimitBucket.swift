/// The state of a tenant's bucket that all relays share, and the arithmetic of a lease from it.
///
/// The same ``GCRA`` as a single relay's, plus the day's count: a lease of `n` notifications fits when the bucket's
/// theoretical arrival time moved `n` emission intervals ahead stays within the burst, and the day's count plus `n`
/// stays within the quota. PostgreSQL keeps this state in one row per tenant and performs ``lease(_:)`` in one
/// `INSERT … ON CONFLICT DO UPDATE … RETURNING`, whose expressions are these, with the same constants
/// (``Constants``), so that both compute the same doubles.
package struct SharedRateLimitBucket: Sendable, Equatable {
    /// UNIX seconds; at or before `now` the bucket is full.
    package var theoreticalArrival: Double
    package var day: Int64
    package var usedToday: Int

    /// A full bucket with nothing used.
    package init(theoreticalArrival: Double = 0, day: Int64 = 0, usedToday: Int = 0) {
        self.theoreticalArrival = theoreticalArrival
        self.day = day
        self.usedToday = usedToday
    }

    /// The state a grant reports.
    package init(_ grant: RateLimitLeaseGrant) {
        self.init(theoreticalArrival: grant.theoreticalArrival, day: grant.day, usedToday: grant.usedToday)
    }

    /// The numbers a lease computes with, derived from the limits once.
    package struct Constants: Sendable, Equatable {
        /// Seconds per notification at the tenant's rate.
        package var interval: Double
        /// The burst in seconds: how far ahead of now the theoretical arrival time may run.
        package var capacity: Double
        /// Slack for floating-point error, as in ``GCRA``: UNIX seconds as a Double carry about 2.4e-7 s of
        /// rounding.
        package var tolerance: Double

        package init(_ limits: RateLimits) {
            interval = 1 / max(limits.ratePerSecond, Self.minimumRate)
            capacity = Double(max(1, limits.burst)) * interval
            tolerance = 1e-6
        }

        /// A rate of 0 would make the interval infinite; configuration refuses it, this guards the arithmetic.
        private static let minimumRate = 1e-9
    }

    /// Takes back what `request` returns (``RateLimitLeaseRequest/returned``), then grants what fits of it and
    /// records it.
    /// Counts `count` critical alerts sent beyond the bucket in the day count of UTC day `day` (which may go past the
    /// quota: later leases of that day then grant nothing); a later day already counted here is left as it is. The
    /// bucket's rate is not touched. ``PostgresStore`` does the same in SQL.
    package mutating func countBeyondLimits(_ count: Int, day: Int64) {
        if day == self.day {
            usedToday += count
        } else if day > self.day {
            self.day = day
            usedToday = count
        }
    }

    package mutating func lease(_ request: RateLimitLeaseRequest) -> RateLimitLeaseGrant {
        let constants = Constants(request.limits)
        let today = request.day
        let base = max(theoreticalArrival, request.now)
        let used = day == today ? max(0, usedToday - request.returned) : 0
        let fit = min(
            Double(request.maximum),
            ((constants.capacity + constants.tolerance - (base - request.now)) / constants.interval).rounded(.down),
            Double(request.limits.dailyQuota - used)
        )
        let granted = fit >= Double(max(1, request.minimum)) ? Int(fit) : 0
        if granted > 0 { theoreticalArrival = base + Double(granted) * constants.interval }
        day = today
        usedToday = used + granted
        return RateLimitLeaseGrant(
            granted: granted,
            theoreticalArrival: theoreticalArrival,
            day: day,
            usedToday: usedToday
        )
    }

    /// Why a lease is refused, and for how long.
    package struct Refusal: Sendable, Equatable {
        /// Whole seconds until the same lease fits, at least 1.
        package var retryAfter: Int
        /// Whether the day's quota, not the rate, refuses it.
        package var quotaExhausted: Bool

        package init(retryAfter: Int, quotaExhausted: Bool) {
            self.retryAfter = retryAfter
            self.quotaExhausted = quotaExhausted
        }
    }

    /// Why `count` notifications cannot be granted at `now`, if they cannot: the bucket only fills up with time, so
    /// a refusal for the rate computed from an older state still holds. The day's count grows until midnight but for
    /// leases given back (``RateLimitLeaseRequest/returned``), so a refusal for the quota holds only as long as the
    /// leases then held may live.
    package func refusal(of count: Int, limits: RateLimits, now: Double) -> Refusal? {
        let today = Int64((now / 86_400).rounded(.down))
        let used = day == today ? usedToday : 0
        if used + count > limits.dailyQuota {
            let untilMidnight = Double(today + 1) * 86_400 - now
            return Refusal(retryAfter: max(1, Int(untilMidnight.rounded(.up))), quotaExhausted: true)
        }
        let constants = Constants(limits)
        let ahead = max(theoreticalArrival, now) - now + Double(count) * constants.interval
        guard ahead > constants.capacity + constants.tolerance else { return nil }
        let wait =
            Double(count) * constants.interval > constants.capacity + constants.tolerance
            // More than the whole burst can never fit: the time to refill the whole bucket.
            ? constants.capacity
            : ahead - constants.capacity
        return Refusal(retryAfter: max(1, Int((wait - constants.tolerance).rounded(.up))), quotaExhausted: false)
    }

    /// Notifications that could be granted at `now`, for the `RateLimit-Remaining` header.
    package func remaining(limits: RateLimits, now: Double) -> Int {
        let constants = Constants(limits)
        let today = Int64((now / 86_400).rounded(.down))
        let used = day == today ? usedToday : 0
        let room =
            (constants.capacity + constants.tolerance - (max(theoreticalArrival, now) - now))
            / constants.interval
        return max(0, min(Int(max(0, room).rounded(.down)), limits.dailyQuota - used))
    }

    /// Seconds until the bucket is full again.
    package func secondsUntilFull(now: Double) -> Double {
        max(0, theoreticalArrival - now)
    }
}
