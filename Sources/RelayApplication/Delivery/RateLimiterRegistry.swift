package import Foundation
package import RelayCore
package import RelayStore
import Synchronization

/// One ``TenantRateLimiter`` per tenant, kept in memory, following the tenant's current limits; with a
/// ``RateLimitLeaseStore``, the tenants' rate and daily quota are shared with the other relays on the same database.
///
/// ### Overview
/// Alone (SQLite), a relay limits tenants in memory: ``admit(tenantID:limits:count:now:)``. Several relays on one
/// PostgreSQL database call ``admitShared(tenantID:limits:count:now:)`` instead: each tenant's ``LeasedRateLimiter``
/// spends notifications leased from the shared bucket, and asks for more when it runs out, so the relays together
/// stay within the tenant's limits. The per-device limit stays local in both cases (a device's pushes normally
/// reach one relay at a time, and it is a brake on loops rather than a quota).
///
/// ### Implementation
/// Decisions are made under a mutex by the pure limiters; a lease is asked for outside it, and its answer applied
/// under it again. Concurrent requests of one tenant may lease at the same time: each lease is accounted for in the
/// shared bucket, so this costs round trips, never accuracy.
package final class RateLimiterRegistry: Sendable {
    private let limiters = Mutex<[String: TenantRateLimiter]>([:])
    private let leased = Mutex<[String: LeasedRateLimiter]>([:])
    private let leases: (any RateLimitLeaseStore)?
    private let policy: LeasedRateLimiter.Policy
    /// Receipt lookups, a bucket per tenant apart from its sends: polling receipts never uses up a tenant's pushes,
    /// and a tenant polling in a loop costs the store a bounded rate. One `Double` per authenticated tenant.
    private let lookups = Mutex<[String: Double]>([:])
    /// Receipt lookups a tenant may make: 2 a second, 60 at once. OneUptime asks once per 5 minutes for up to 300
    /// ids, Expo's SDKs once per batch of 1,000 tickets.
    package static let receiptLookups = GCRA(rate: 2, burst: 60)

    /// - Parameters:
    ///   - leases: The shared buckets of several relays; `nil` limits tenants in this process alone.
    ///   - policy: How much to lease and for how long.
    package init(leases: (any RateLimitLeaseStore)? = nil, policy: LeasedRateLimiter.Policy = .standard) {
        self.leases = leases
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

    /// Admits `count` notifications for the tenant or refuses them all, in this process alone.
    package func admit(tenantID: String, limits: RateLimits, count: Int, now: Date) -> TenantRateLimiter.Decision {
        limiters.withLock { limiters in
            // Mutated in place through the dictionary: a copy out and back would copy the per-device table each time.
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].update(limits)
            return limiters[tenantID, default: TenantRateLimiter(limits: limits)].admit(
                count, now: now.timeIntervalSince1970)
        }
    }

    /// Admits `count` notifications for the tenant or refuses them all, within the limits the relays share; without
    /// a lease store, the same as ``admit(tenantID:limits:count:now:)``.
    ///
    /// - Throws: The lease store's error when it had to be asked and failed; nothing is admitted then.
    package func admitShared(
        tenantID: String,
        limits: RateLimits,
        count: Int,
        now: Date
    ) async throws -> TenantRateLimiter.Decision {
        guard let leases else { return admit(tenantID: tenantID, limits: limits, count: count, now: now) }
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
            do {
                grant = try await leases.leaseRateLimit(tenantID: tenantID, pending.request)
            } catch {
                leased.withLock { $0[tenantID]?.leaseFailed(pending, now: seconds) }
                throw error
            }
            return leased.withLock { leased in
                leased[tenantID, default: LeasedRateLimiter(limits: limits, policy: policy)]
                    .leaseAnswered(grant, pending, now: seconds)
            }
        }
    }

    /// Takes one notification from a device's per-minute allowance.
    package func admitDevice(tenantID: String, fingerprint: String, now: Date) -> Bool {
        limiters.withLock { limiters in
            guard limiters[tenantID] != nil else { return true }
            return limiters[tenantID, default: TenantRateLimiter(limits: .init())].admitDevice(
                fingerprint,
                now: now.timeIntervalSince1970
            )
        }
    }
}
