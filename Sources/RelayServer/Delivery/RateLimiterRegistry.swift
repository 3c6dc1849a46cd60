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
            // Mutated in place through the dictionary: a copy out and back would copy the per-device table each time.
            limiters[tenantID, default: TenantRateLimiter(limits: limits)].update(limits)
            return limiters[tenantID, default: TenantRateLimiter(limits: limits)].admit(count, now: now.timeIntervalSince1970)
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
