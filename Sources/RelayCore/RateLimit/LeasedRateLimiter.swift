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
/// A batch that expires unspent is lost to the tenant: the lifetime is long enough for ten batches at the full rate,
/// so a relay receiving a tenth of the tenant's traffic or more spends its batches, and at least a second.
///
/// The last state the shared bucket reported also refuses requests that cannot fit without asking it again: the
/// bucket's theoretical arrival time only moves forward and the day's count only grows, so an old refusal holds.
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

        package init(count: Int, expires: Double) {
            self.count = count
            self.expires = expires
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
        let request = RateLimitLeaseRequest(
            limits: limits,
            now: now,
            minimum: missing,
            maximum: min(max(1, limits.burst), missing + policy.batchSize(for: limits))
        )
        return .lease(PendingLease(request: request, count: count, reserved: reserved))
    }

    /// Admits or refuses the request a lease was for, from the shared bucket's answer.
    package mutating func leaseAnswered(
        _ grant: RateLimitLeaseGrant,
        _ pending: PendingLease,
        now: Double
    ) -> TenantRateLimiter.Decision {
        remember(SharedRateLimitBucket(grant))
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
            insert(Lease(count: left, expires: expires))
        }
        return .admitted(status(now: now))
    }

    /// The lease could not be asked for (the store failed): gives back what the request had reserved.
    package mutating func leaseFailed(_ pending: PendingLease, now: Double) {
        giveBack(pending.reserved, now: now)
    }

    // MARK: - Private

    private mutating func expire(now: Double) {
        leases.removeAll { $0.expires <= now }
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
        for lease in reserved where lease.expires > now { insert(lease) }
    }

    /// Keeps the newest report: answers to concurrent leases may arrive out of order.
    private mutating func remember(_ report: SharedRateLimitBucket) {
        guard let known = shared else {
            shared = report
            return
        }
        var newest = known.day > report.day ? known : report
        newest.theoreticalArrival = max(known.theoreticalArrival, report.theoreticalArrival)
        if known.day == report.day { newest.usedToday = max(known.usedToday, report.usedToday) }
        shared = newest
    }

    /// The refusal of `missing` more notifications that the last report already implies, if any.
    private func refusal(of missing: Int, now: Double) -> TenantRateLimiter.Decision? {
        if missing > limits.burst {
            // More than the whole burst can never fit; wait for a full bucket, as ``TenantRateLimiter`` answers.
            let seconds = max(1, Int((Double(limits.burst) / max(limits.ratePerSecond, 1e-9)).rounded(.up)))
            return .refused(retryAfter: seconds, quotaExhausted: false, status(now: now))
        }
        guard let shared, let refusal = shared.refusal(of: missing, limits: limits, now: now) else { return nil }
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
