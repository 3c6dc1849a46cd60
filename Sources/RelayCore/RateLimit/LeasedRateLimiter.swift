/// One relay's side of a tenant's limits when several relays share them: notifications leased from the shared bucket
/// in small batches, spent locally. Pure: time comes in as UNIX seconds, and the owner performs the leases.
///
/// ### Overview
/// A request is admitted whole or refused whole, as with ``TenantRateLimiter``. When the relay holds enough leased
/// notifications it spends them without asking anyone. Otherwise ``admit(_:now:)`` answers ``Step/lease(_:)``: the
/// owner asks the shared bucket (``SharedRateLimitBucket``, one database row) for at least what is missing and at
/// most a small batch, then hands the answer to ``leaseAnswered(_:_:now:)``, which admits or refuses the request.
///
/// ### Why the total stays within the limits
/// The shared bucket grants no more than one ``GCRA`` allows: `rate × t + burst` in any `t` seconds. Relays spend
/// only what was granted, so in any window they admit at most what was granted during it plus what they held when
/// it began. After a lease a relay holds at most one batch (5 % of the burst) beyond the request it leased for, so
/// `n` relays admit at most `n × 5 %` of the burst more than one relay would: within 10 % for two. Whatever `n`, a
/// leased notification is spent within its lease's lifetime (``Policy/leaseLifetime(for:)``, at most 5 s) or
/// expires, so the excess is also at most `rate × lifetime`, small against `rate × t` over a minute.
///
/// A batch that expires unspent is lost to the rate, not to the daily quota: the lifetime is long enough for ten
/// batches at the full rate, so a relay receiving a tenth of the tenant's traffic or more spends its batches, and at
/// least a second; what expires anyway goes back to the day's count with the relay's next lease
/// (``RateLimitLeaseRequest/returned``). Otherwise a tenant sending one notification every few seconds would use up
/// its quota six times as fast as it sends (the notification and a batch of 5, lost). Until that next lease, the
/// day's count holds at most one batch per relay that was not spent.
///
/// The last state the shared bucket reported also refuses requests that cannot fit without asking it again: the
/// bucket's theoretical arrival time only moves forward, so an old refusal for the rate holds. The day's count also
/// goes down when leases are given back, so a refusal for the quota holds only as long as a lease lives
/// (``Policy/leaseLifetime(for:)``); then the relay asks again, at most once per lifetime while the quota is used
/// up.
package struct LeasedRateLimiter: Sendable {
    /// How much to lease and for how long.
    package struct Policy: Sendable, Equatable {
        /// The most a lease takes beyond what the request at hand needs, as a fraction of the burst.
        package var batchFraction: Double
        /// A lease lives as long as the rate takes to refill this many batches, within the bounds below.
        package var lifetimeInBatches: Double
        /// Bounds of a lease's lifetime, in seconds.
        package var minimumLifetime: Double
        package var maximumLifetime: Double

        package init(
            batchFraction: Double = 0.05,
            lifetimeInBatches: Double = 10,
            minimumLifetime: Double = 1,
            maximumLifetime: Double = 5
        ) {
            self.batchFraction = batchFraction
            self.lifetimeInBatches = lifetimeInBatches
            self.minimumLifetime = minimumLifetime
            self.maximumLifetime = maximumLifetime
        }

        package static let standard = Policy()

        /// Notifications a lease asks for beyond the request's need: at least 1.
        package func batchSize(for limits: RateLimits) -> Int {
            max(1, Int((Double(limits.burst) * batchFraction).rounded(.down)))
        }

        /// Seconds a leased notification may wait to be spent.
        package func leaseLifetime(for limits: RateLimits) -> Double {
            let refill = lifetimeInBatches * Double(batchSize(for: limits)) / max(limits.ratePerSecond, 1e-9)
            return min(maximumLifetime, max(minimumLifetime, refill))
        }
    }

    /// Notifications leased together, spendable until `expires`.
    package struct Lease: Sendable, Equatable {
        package var count: Int
        package var expires: Double
        /// The UTC day whose quota counted them (``RateLimitLeaseRequest/day``): they expire by its end.
        package var day: Int64

        package init(count: Int, expires: Double, day: Int64) {
            self.count = count
            self.expires = expires
            self.day = day
        }
    }

    /// A lease the owner is to ask the shared bucket for, and the request waiting for it; hand it back to
    /// ``leaseAnswered(_:_:now:)`` or ``leaseFailed(_:now:)``.
    package struct PendingLease: Sendable, Equatable {
        package var request: RateLimitLeaseRequest
        /// Notifications of the request being admitted.
        package var count: Int
        /// What the relay held towards the request; spent with the lease, given back if it is refused.
        package var reserved: [Lease]
    }

    /// What ``admit(_:now:)`` leads to.
    package enum Step: Sendable, Equatable {
        /// Decided locally.
        case decided(TenantRateLimiter.Decision)
        /// Ask the shared bucket, then call ``leaseAnswered(_:_:now:)``.
        case lease(PendingLease)
    }

    package private(set) var limits: RateLimits
    private let policy: Policy
    /// Held notifications, oldest lease first.
    private var leases: [Lease] = []
    /// The shared bucket as last reported.
    private var shared: SharedRateLimitBucket?
    /// When the lease whose answer gave ``shared``'s day's count was asked for.
    private var reportedAt = -Double.infinity
    /// Notifications of leases that expired unspent, to give back to the quota of `day` with the next lease.
    private var unspent: (day: Int64, count: Int) = (-1, 0)

    package init(limits: RateLimits, policy: Policy = .standard) {
        self.limits = limits
        self.policy = policy
    }

    /// Notifications held and not expired at the last call.
    package var held: Int { leases.reduce(0) { $0 + $1.count } }

    /// Changes the limits. Held notifications stay (the shared bucket has counted them); the next lease follows the
    /// new limits.
    package mutating func update(_ limits: RateLimits) {
        guard limits != self.limits else { return }
        self.limits = limits
    }

    /// Admits `count` notifications from what the relay holds, refuses them from what the shared bucket last
    /// reported, or asks for a lease.
    package mutating func admit(_ count: Int, now: Double) -> Step {
        expire(now: now)
        if count <= held {
            take(count)
            return .decided(.admitted(status(now: now)))
        }
        let missing = count - held
        if let refusal = refusal(of: missing, now: now) {
            return .decided(refusal)
        }
        let reserved = leases
        leases.removeAll()
        var request = RateLimitLeaseRequest(
            limits: limits,
            now: now,
            minimum: missing,
            maximum: min(max(1, limits.burst), missing + policy.batchSize(for: limits))
        )
        request.returned = takeUnspent(on: request.day)
        return .lease(PendingLease(request: request, count: count, reserved: reserved))
    }

    /// Admits or refuses the request a lease was for, from the shared bucket's answer.
    package mutating func leaseAnswered(
        _ grant: RateLimitLeaseGrant,
        _ pending: PendingLease,
        now: Double
    ) -> TenantRateLimiter.Decision {
        remember(SharedRateLimitBucket(grant), askedAt: pending.request.now)
        expire(now: now)
        guard grant.granted > 0, grant.granted >= pending.request.minimum else {
            giveBack(pending.reserved, now: now)
            return refusal(of: pending.request.minimum, now: now)
                ?? .refused(retryAfter: 1, quotaExhausted: false, status(now: now))
        }
        // The reserved notifications and the grant pay for the request; what is left is held for the next ones.
        let reserved = pending.reserved.reduce(0) { $0 + $1.count }
        let left = reserved + grant.granted - pending.count
        if left > 0 {
            // The leftover expires with the new lease, or with the day whose quota counted it.
            let endOfDay = Double(pending.request.day + 1) * 86_400
            let expires = min(pending.request.now + policy.leaseLifetime(for: limits), endOfDay)
            insert(Lease(count: left, expires: expires, day: pending.request.day))
        }
        return .admitted(status(now: now))
    }

    /// The lease could not be asked for (the store failed): gives back what the request had reserved. What it returned
    /// (``RateLimitLeaseRequest/returned``) is not returned again: the store may have taken it (an answer lost after
    /// the commit), and taking it twice would grant more than the quota.
    package mutating func leaseFailed(_ pending: PendingLease, now: Double) {
        giveBack(pending.reserved, now: now)
    }

    // MARK: - Private

    private mutating func expire(now: Double) {
        for lease in leases where lease.expires <= now { setAside(lease, now: now) }
        leases.removeAll { $0.expires <= now }
    }

    /// Keeps what an expired lease left unspent, to give back to its day's quota; an earlier day's is past caring.
    private mutating func setAside(_ lease: Lease, now: Double) {
        guard lease.day == TenantRateLimiter.day(of: now) else { return }
        if unspent.day != lease.day { unspent = (lease.day, 0) }
        unspent.count += lease.count
    }

    /// What expired unspent on `day`, handed to a lease: kept no longer.
    private mutating func takeUnspent(on day: Int64) -> Int {
        defer { unspent = (day, 0) }
        return unspent.day == day ? unspent.count : 0
    }

    /// Spends `count` held notifications, those that expire first first.
    private mutating func take(_ count: Int) {
        var left = count
        while left > 0, !leases.isEmpty {
            let spent = min(left, leases[0].count)
            leases[0].count -= spent
            left -= spent
            if leases[0].count == 0 { leases.removeFirst() }
        }
    }

    private mutating func insert(_ lease: Lease) {
        let index = leases.firstIndex { $0.expires > lease.expires } ?? leases.endIndex
        leases.insert(lease, at: index)
    }

    private mutating func giveBack(_ reserved: [Lease], now: Double) {
        for lease in reserved {
            if lease.expires > now { insert(lease) } else { setAside(lease, now: now) }
        }
    }

    /// Keeps the newest report: answers to concurrent leases may arrive out of order. The bucket's time only moves
    /// forward, so the latest reported stands; the day's count may go down (leases given back), so that of the lease
    /// asked for last stands, the larger of two asked for at once.
    private mutating func remember(_ report: SharedRateLimitBucket, askedAt time: Double) {
        guard var known = shared else {
            shared = report
            reportedAt = time
            return
        }
        known.theoreticalArrival = max(known.theoreticalArrival, report.theoreticalArrival)
        if report.day > known.day || (report.day == known.day && time > reportedAt) {
            known.day = report.day
            known.usedToday = report.usedToday
            reportedAt = time
        } else if report.day == known.day && time == reportedAt {
            known.usedToday = max(known.usedToday, report.usedToday)
        }
        shared = known
    }

    /// The refusal of `missing` more notifications that the last report already implies, if any.
    private func refusal(of missing: Int, now: Double) -> TenantRateLimiter.Decision? {
        if missing > limits.burst {
            // More than the whole burst can never fit; wait for a full bucket, as ``TenantRateLimiter`` answers.
            let seconds = max(1, Int((Double(limits.burst) / max(limits.ratePerSecond, 1e-9)).rounded(.up)))
            return .refused(retryAfter: seconds, quotaExhausted: false, status(now: now))
        }
        guard var shared else { return nil }
        // What this relay is to give back is not used.
        if shared.day == unspent.day { shared.usedToday -= unspent.count }
        guard let refusal = shared.refusal(of: missing, limits: limits, now: now) else { return nil }
        // Other relays may have given back since: a refusal for the quota is trusted while a lease may live.
        if refusal.quotaExhausted && now - reportedAt >= policy.leaseLifetime(for: limits) { return nil }
        return .refused(retryAfter: refusal.retryAfter, quotaExhausted: refusal.quotaExhausted, status(now: now))
    }

    /// For the RateLimit-* headers: what is held plus what the shared bucket last had room for.
    private func status(now: Double) -> TenantRateLimiter.Status {
        let room = shared?.remaining(limits: limits, now: now) ?? min(limits.burst, limits.dailyQuota)
        return TenantRateLimiter.Status(
            limit: limits.burst,
            remaining: held + room,
            reset: Int((shared?.secondsUntilFull(now: now) ?? 0).rounded(.up))
        )
    }
}
