package import RelayCore

/// The tenants' rate-limit buckets that several relays share (PostgreSQL), from which each relay leases allowance
/// in small batches (see ``LeasedRateLimiter``).
///
/// A single relay (SQLite, memory) has no such store and limits tenants in memory alone.
package protocol RateLimitLeaseStore: Sendable {
    /// Grants what fits of `request` from the tenant's shared bucket and records it, atomically with respect to
    /// every other relay: the arithmetic of ``SharedRateLimitBucket/lease(_:)`` on the stored state (a new tenant's
    /// bucket starts full).
    ///
    /// - Returns: What was granted (0, or between the request's minimum and maximum) and the bucket's state after.
    func leaseRateLimit(tenantID: String, _ request: RateLimitLeaseRequest) async throws -> RateLimitLeaseGrant
    /// Adds `count` critical alerts sent beyond the tenant's shared bucket to its count of UTC day `day`
    /// (``SharedRateLimitBucket/countBeyondLimits(_:day:)``), so that the relays' day's quota counts them as it counts
    /// what they leased.
    func countBeyondLimits(tenantID: String, day: Int64, count: Int) async throws
}
