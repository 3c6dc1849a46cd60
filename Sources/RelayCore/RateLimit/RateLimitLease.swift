/// A relay's request for a share of a tenant's limits, from the bucket all relays of one database share.
///
/// The shared bucket grants between ``minimum`` and ``maximum`` notifications (as many as fit, up to the maximum),
/// or none when not even the minimum fits. Time is UNIX seconds, as in ``TenantRateLimiter``.
package struct RateLimitLeaseRequest: Sendable, Equatable {
    /// The tenant's limits: rate and burst for the bucket, the daily quota for the day's count.
    package var limits: RateLimits
    package var now: Double
    /// What the request being admitted needs beyond what the relay holds.
    package var minimum: Int
    /// What the relay would like to hold: the minimum, or a small batch for the requests to come.
    package var maximum: Int
    /// Notifications of the relay's earlier leases on ``day`` that expired unspent: the bucket takes them off the
    /// day's count (never below 0), so that a lease not spent does not use up the daily quota. The rate keeps them:
    /// their time has passed.
    package var returned: Int

    package init(limits: RateLimits, now: Double, minimum: Int, maximum: Int, returned: Int = 0) {
        self.limits = limits
        self.now = now
        self.minimum = minimum
        self.maximum = maximum
        self.returned = returned
    }

    /// The UTC day of ``now``, counted from 1970-01-01: the daily quota's period.
    package var day: Int64 { Int64((now / 86_400).rounded(.down)) }
}

/// The shared bucket's answer to a ``RateLimitLeaseRequest``: what it granted and its state afterwards.
package struct RateLimitLeaseGrant: Sendable, Equatable {
    /// Notifications granted: 0, or between the request's minimum and maximum.
    package var granted: Int
    /// The bucket's theoretical arrival time after the grant (UNIX seconds; see ``GCRA``).
    package var theoreticalArrival: Double
    /// The UTC day ``usedToday`` counts.
    package var day: Int64
    /// Notifications granted on ``day``, this grant included.
    package var usedToday: Int

    package init(granted: Int, theoreticalArrival: Double, day: Int64, usedToday: Int) {
        self.granted = granted
        self.theoreticalArrival = theoreticalArrival
        self.day = day
        self.usedToday = usedToday
    }
}
