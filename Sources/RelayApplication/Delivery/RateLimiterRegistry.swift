package import Foundation
package import RelayCore
package import RelayStore
import Synchronization

/// One ``TenantRateLimiter`` per tenant, kept in memory, following the tenant's current limits; with a
/// ``RateLimitLeaseStore``, the tenants' rate and daily quota are shared with the other relays on the same database.
///
/// ### Overview
/// Requests are admitted with ``admitShared(tenantID:limits:count:now:)``. Alone (SQLite), a relay limits tenants in
/// memory, and starts each tenant's UTC day from the day's count in its store (`usage`): the first request of a
/// tenant on a day (since the relay started, or since midnight) reads it, the others are decided in memory. So a
/// restart keeps the day's quota, and the store is read once per tenant and day, not per request. Several relays on
/// one PostgreSQL database share the limits instead: each tenant's ``LeasedRateLimiter`` spends notifications leased
/// from the shared bucket, whose row also holds the day's count, and asks for more when it runs out, so the relays
/// together (and a relay started again) stay within the tenant's limits. The per-device limit stays local in both
/// cases (a device's pushes normally reach one relay at a time, and it is a brake on loops rather than a quota).
///
/// ### Why the count in memory is enough alone
/// Alone on its store, the relay is the only writer of usage, so the store's count when the day was seeded plus what
/// was admitted since is the day's count, without a round trip per request. Two relays on one SQLite file would each
/// count alone: several relays need PostgreSQL. The store has a notification once its outcome (or its refusal) is
/// committed, or while it is in the delivery journal (answered pending, or accepted asynchronously: a restarted relay
/// resumes it, ``PushStore/quotaUsed(tenantID:on:)`` counts it), so it lacks only what never got there: notifications
/// of requests not yet answered when a relay is killed (a graceful stop commits everything) and those of a failed
/// commit, which the quota gives back after a restart; at most what was in flight. Usage counts a notification on the
/// day its outcome is committed, the quota on the day it is admitted: one admitted just before midnight and concluded
/// after it also counts in the next day's usage, which only makes a count read that day higher. The token bucket (rate
/// and burst) is not kept: a restart starts it full.
///
/// ### Implementation
/// Decisions are made under a mutex by the pure limiters; a lease or the day's count is asked for outside it, and
/// its answer applied under it again. Concurrent requests of one tenant may lease at the same time: each lease is
/// accounted for in the shared bucket, so this costs round trips, never accuracy. Concurrent first requests of a
/// day may each read the day's count: the first answer seeds the day and the others are ignored
/// (``TenantRateLimiter/seedQuota(used:now:)``).
package final class RateLimiterRegistry: Sendable {
    private let limiters = Mutex<[String: TenantRateLimiter]>([:])
    private let leased = Mutex<[String: LeasedRateLimiter]>([:])
    /// The leases in flight, by tenant and lease, with the requests waiting for each to be answered.
    private let inFlight = Mutex<(next: UInt64, leases: [String: [UInt64: [CheckedContinuation<Void, Never>]]])>(
        (0, [:]))
    private let leases: (any RateLimitLeaseStore)?
    /// Where the day's count starts when the limits are not shared: the store's usage.
    private let usage: (any PushStore)?
    private let policy: LeasedRateLimiter.Policy
    /// Measures how long a lease waited for its answer: a refused one is decided again at the time of its answer
    /// (see ``admitShared(tenantID:limits:count:now:)``).
    private let clock: RelayClock
    /// How long a request waits for a lease or the day's count (`[store] request_timeout_ms`); `nil`: as long as the
    /// store takes.
    private let deadline: StoreCallDeadline?
    /// Receipt lookups, a bucket per tenant apart from its sends: polling receipts never uses up a tenant's pushes,
    /// and a tenant polling in a loop costs the store a bounded rate. One `Double` per authenticated tenant.
    private let lookups = Mutex<[String: Double]>([:])
    /// Receipt lookups a tenant may make: 2 a second, 60 at once. OneUptime asks once per 5 minutes for up to 300
    /// ids, Expo's SDKs once per batch of 1,000 tickets.
    package static let receiptLookups = GCRA(rate: 2, burst: 60)

    /// - Parameters:
    ///   - leases: The shared buckets of several relays; `nil` limits tenants in this process alone.
    ///   - usage: Without `leases`, the store whose usage starts each tenant's day of quota
    ///     (``PushStore/quotaUsed(tenantID:on:)``); `nil` starts every day at 0, in memory alone.
    ///   - policy: How much to lease and for how long.
    ///   - clock: Measures how long leases wait for their answers.
    ///   - deadline: How long a request waits for the store.
    package init(
        leases: (any RateLimitLeaseStore)? = nil,
        usage: (any PushStore)? = nil,
        policy: LeasedRateLimiter.Policy = .standard,
        clock: RelayClock = .system,
        deadline: StoreCallDeadline? = nil
    ) {
        self.clock = clock
        self.deadline = deadline
        self.leases = leases
        self.usage = usage
        self.policy = policy
    }

    /// Takes one receipt lookup from the tenant's lookup bucket; `.denied` says when one fits again.
    package func admitReceiptLookup(tenantID: String, now: Date) -> GCRA.Decision {
        lookups.withLock { lookups in
            Self.receiptLookups.take(1, now: now.timeIntervalSince1970, arrival: &lookups[tenantID, default: 0])
        }
    }

    /// Whether tenants' limits are shared with other relays.
    package var isShared: Bool { leases != nil }

    /// Admits `count` notifications for the tenant or refuses them all, in this process alone, counting the day's
    /// quota from 0 unless it was seeded.
    package func admit(tenantID: String, limits: RateLimits, count: Int, now: Date) -> TenantRateLimiter.Decision {
        limiters.withLock { limiters in
            // Mutated in place through the dictionary: a copy out and back would copy the per-device table each time.
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].update(limits)
            return limiters[tenantID, default: TenantRateLimiter(limits: limits)].admit(
                count, now: now.timeIntervalSince1970)
        }
    }

    /// Admits `count` notifications for the tenant or refuses them all, within the limits the relays share; without
    /// a lease store, in this process alone, from the day's count in the store (read at the tenant's first request
    /// of the day) or, without either, as ``admit(tenantID:limits:count:now:)``.
    ///
    /// A refused lease is not yet a refused request: the request is decided again, once, at the time of the answer,
    /// after the tenant's other leases then in flight have been answered: from what this relay holds, else from what
    /// the bucket reported, and leased again only if that has room. Two cases follow a stall (a database that did
    /// not answer for seconds), when a tenant's requests have queued their leases meanwhile:
    /// - A shared lease carries the time of its request, and the database evaluates it at that time. Leases queued
    ///   during a stall reach it out of order, and one older than the bucket's latest grant looks as if the tenant had
    ///   sent its whole burst in the past moments: at the time of its answer, it fits.
    /// - Each queued lease asks for its request and a batch more, so the first answered take the bucket's room and
    ///   the later ones are refused, while the batches the first brought back are held here, unspent: they pay for
    ///   the refused ones.
    /// A refusal the bucket's last report already implies costs no lease at all, and the second look none either.
    ///
    /// - Throws: The lease store's or the store's error when it had to be asked and failed; nothing is admitted
    ///   then, and the next request asks again.
    package func admitShared(
        tenantID: String,
        limits: RateLimits,
        count: Int,
        now: Date
    ) async throws -> TenantRateLimiter.Decision {
        try await admitShared(tenantID: tenantID, limits: limits, count: count, now: now, afterStall: false)
    }

    private func admitShared(
        tenantID: String,
        limits: RateLimits,
        count: Int,
        now: Date,
        afterStall: Bool
    ) async throws -> TenantRateLimiter.Decision {
        guard let leases else {
            guard let usage else { return admit(tenantID: tenantID, limits: limits, count: count, now: now) }
            return try await admitCounted(tenantID: tenantID, limits: limits, count: count, now: now, usage: usage)
        }
        let seconds = now.timeIntervalSince1970
        // The local limiter still keeps the tenant's per-device buckets (``admitDevice``).
        limiters.withLock { $0[tenantID, default: TenantRateLimiter(limits: limits)].update(limits) }
        let step = leased.withLock { leased in
            leased[tenantID, default: LeasedRateLimiter(limits: limits, policy: policy)].update(limits)
            return leased[tenantID, default: LeasedRateLimiter(limits: limits, policy: policy)].admit(
                count, now: seconds)
        }
        switch step {
        case .decided(let decision):
            return decision
        case .lease(let pending):
            let grant: RateLimitLeaseGrant
            let asked = clock.now
            let lease = beginLease(tenantID: tenantID)
            do {
                grant = try await withDeadline { try await leases.leaseRateLimit(tenantID: tenantID, pending.request) }
            } catch {
                leased.withLock { $0[tenantID]?.leaseFailed(pending, now: seconds) }
                _ = endLease(tenantID: tenantID, lease)
                throw error
            }
            let decision = leased.withLock { leased in
                leased[tenantID, default: LeasedRateLimiter(limits: limits, policy: policy)]
                    .leaseAnswered(grant, pending, now: seconds)
            }
            let others = endLease(tenantID: tenantID, lease)
            guard case .refused = decision, !afterStall else { return decision }
            for other in others { await waitForLease(tenantID: tenantID, other) }
            return try await admitShared(
                tenantID: tenantID, limits: limits, count: count,
                now: now.addingTimeInterval(JournalSettings.seconds(clock.now - asked)), afterStall: true)
        }
    }

    /// Admits in memory once the tenant's day is seeded; seeds it from the store's count first when it is not.
    private func admitCounted(
        tenantID: String,
        limits: RateLimits,
        count: Int,
        now: Date,
        usage: any PushStore
    ) async throws -> TenantRateLimiter.Decision {
        let seconds = now.timeIntervalSince1970
        let known = limiters.withLock { limiters -> TenantRateLimiter.Decision? in
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].update(limits)
            guard limiters[tenantID, default: TenantRateLimiter(limits: limits)].knowsQuota(at: seconds) else {
                return nil
            }
            return limiters[tenantID, default: TenantRateLimiter(limits: limits)].admit(count, now: seconds)
        }
        if let known { return known }
        let used = try await withDeadline { try await usage.quotaUsed(tenantID: tenantID, on: now) }
        return limiters.withLock { limiters in
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].seedQuota(used: used, now: seconds)
            return limiters[tenantID, default: TenantRateLimiter(limits: limits)].admit(count, now: seconds)
        }
    }

    /// Marks a lease of the tenant in flight.
    private func beginLease(tenantID: String) -> UInt64 {
        inFlight.withLock { state in
            state.next += 1
            state.leases[tenantID, default: [:]][state.next] = []
            return state.next
        }
    }

    /// Marks the lease answered (its answer applied), wakes the requests waiting for it, and returns the tenant's
    /// other leases still in flight.
    private func endLease(tenantID: String, _ lease: UInt64) -> [UInt64] {
        let (waiters, others) = inFlight.withLock { state in
            let waiters = state.leases[tenantID]?.removeValue(forKey: lease) ?? []
            let others = Array(state.leases[tenantID]?.keys ?? [:].keys)
            if others.isEmpty { state.leases[tenantID] = nil }
            return (waiters, others)
        }
        for waiter in waiters { waiter.resume() }
        return others
    }

    /// Returns once the tenant's lease `lease` has been answered (at once if it has).
    private func waitForLease(tenantID: String, _ lease: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = inFlight.withLock { state in
                guard state.leases[tenantID]?[lease] != nil else { return false }
                state.leases[tenantID]?[lease]?.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    private func withDeadline<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let deadline else { return try await call() }
        return try await deadline.run(call)
    }

    /// Counts critical alerts sent beyond the tenant's bucket in its day's quota (``TenantRateLimiter/countCritical``):
    /// in memory alone on its store, and, with shared limits (PostgreSQL), in the shared bucket's day count too, which
    /// the relays' later leases of the day read.
    ///
    /// - Throws: The lease store's error; the count in memory is made all the same.
    package func countCritical(tenantID: String, limits: RateLimits, count: Int, now: Date) async throws {
        let seconds = now.timeIntervalSince1970
        limiters.withLock { limiters in
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].update(limits)
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].countCritical(count, now: seconds)
        }
        guard let leases, count > 0 else { return }
        try await leases.countBeyondLimits(tenantID: tenantID, day: TenantRateLimiter.day(of: seconds), count: count)
    }

    /// Takes one critical alert from a device's allowance of critical alerts (`perMinute` a minute).
    package func admitCriticalDevice(
        tenantID: String,
        limits: RateLimits,
        fingerprint: String,
        now: Date,
        perMinute: Int
    ) -> Bool {
        limiters.withLock { limiters in
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].admitCriticalDevice(
                fingerprint, now: now.timeIntervalSince1970, perMinute: perMinute)
        }
    }

    /// The tenant's bucket and day's quota as this relay knows them, without taking anything; `nil` before its first
    /// request here.
    package func status(tenantID: String, now: Date) -> TenantRateLimiter.Status? {
        limiters.withLock { $0[tenantID]?.status(now: now.timeIntervalSince1970) }
    }

    /// What is left of the tenant's bucket and day's quota as this relay knows them; `nil` before its first request
    /// here on `now`'s UTC day (the day's count is then the store's).
    package func left(tenantID: String, now: Date) -> (bucket: Int, dailyQuota: Int)? {
        let seconds = now.timeIntervalSince1970
        return limiters.withLock { limiters in
            guard let limiter = limiters[tenantID], limiter.knowsQuota(at: seconds) else { return nil }
            return limiter.left(now: seconds)
        }
    }

    /// Takes one notification from a device's per-minute allowance.
    package func admitDevice(tenantID: String, fingerprint: String, now: Date) -> Bool {
        limiters.withLock { limiters in
            // One look-up, the limiter changed in place; a tenant without a limiter here is not limited per device.
            limiters[tenantID]?.admitDevice(fingerprint, now: now.timeIntervalSince1970) ?? true
        }
    }
}
