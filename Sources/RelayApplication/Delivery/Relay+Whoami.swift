import Foundation
import RelayCore
import RelayStore

extension Relay {
    /// What the caller's tenant and key are, may do and have left now (`GET /v1/whoami`).
    ///
    /// It reads the store (the key's record, this hour's critical reserve, and the day's count when this relay has
    /// not admitted anything for the tenant today), so it is a lookup: it takes one from the tenant's lookup budget
    /// (``admitLookup(tenantID:)``), shared with receipt lookups and dry runs, never from its pushes.
    ///
    /// What is left of the bucket and the daily quota is this relay's own count
    /// (``RateLimiterRegistry/left(tenantID:now:)``) once it has admitted a request of the tenant: alone on its
    /// store, that is the tenant's. Before, the bucket is full (a relay starts every bucket full) and the quota's rest
    /// is the day's count in the store (``PushStore/quotaUsed(tenantID:on:)``), as the tenant's next request will
    /// start from. Several relays on PostgreSQL share the bucket and the quota through leases that are not looked at
    /// here: the bucket is this relay's view, and the quota's rest the day's count in the store, which all of them
    /// write.
    ///
    /// - Throws: ``RequestRefusal/receiptLookupsExhausted(retryAfter:)`` when the lookup budget is used up,
    ///   ``RequestRefusal/storeUnavailable`` when the store does not answer.
    package func whoami(identity: TenantIdentity) async throws(RequestRefusal) -> TenantSelfDescription {
        let tenant = identity.tenant
        try admitLookup(tenantID: tenant.id)
        let date = clock.date
        let known = limiters.isShared ? nil : limiters.left(tenantID: tenant.id, now: date)
        do {
            // Keys are revoked, never deleted: a key that authenticated is in the store.
            guard let keyRecord = try await store.key(id: identity.keyID) else { throw RequestRefusal.storeUnavailable }
            let reserveUsed = try await store.criticalReserveUsed(
                tenantID: tenant.id, hour: Int64(date.timeIntervalSince1970) / 3600)
            let left: (bucket: Int, dailyQuota: Int)
            if let known {
                left = known
            } else {
                // A bucket this relay has not counted from today (or, shared, never takes from) is full here.
                let used = try await store.quotaUsed(tenantID: tenant.id, on: date)
                left = (tenant.limits.burst, tenant.limits.dailyQuota - used)
            }
            return TenantSelfDescription(
                tenant: tenant,
                keyRecord: keyRecord,
                senders: apps,
                criticalPerDevicePerMinute: settings.criticalPerDevicePerMinute,
                left: left,
                criticalReserveUsed: reserveUsed
            )
        } catch {
            throw .storeUnavailable
        }
    }
}
