package import Foundation
package import RelayCore
import Synchronization

/// One ``TenantRateLimiter`` per tenant, kept in memory, following the tenant's current limits.
package final class RateLimiterRegistry: Sendable {
    private let limiters = Mutex<[String: TenantRateLimiter]>([:])

    package init() {}

    /// Admits `count` notifications for the tenant or refuses them all.
    package func admit(tenantID: String, limits: RateLimits, count: Int, now: Date) -> TenantRateLimiter.Decision {
        limiters.withLock { limiters in
            var limiter = limiters[tenantID] ?? TenantRateLimiter(limits: limits)
            limiter.update(limits)
            let decision = limiter.admit(count, now: now.timeIntervalSince1970)
            limiters[tenantID] = limiter
            return decision
        }
    }

    /// Takes one notification from a device's per-minute allowance.
    package func admitDevice(tenantID: String, fingerprint: String, now: Date) -> Bool {
        limiters.withLock { limiters in
            guard var limiter = limiters[tenantID] else { return true }
            let admitted = limiter.admitDevice(fingerprint, now: now.timeIntervalSince1970)
            limiters[tenantID] = limiter
            return admitted
        }
    }
}
