import PostgresNIO
package import RelayCore
import RelayStore

extension PostgresStore: RateLimitLeaseStore {
    /// One upsert on the tenant's `rate_limit_buckets` row: the row lock makes the read-compute-write atomic across
    /// relays, and `RETURNING` brings the answer back in the same round trip.
    ///
    /// The expressions are ``SharedRateLimitBucket/lease(_:)``'s, term for term, on the same bound doubles (the
    /// constants are computed once in Swift), so that the database and the pure model agree to the bit. A tenant's
    /// first lease inserts the row with what a full bucket grants, computed by the model itself (nothing to take back
    /// then). `last_grant` holds the latest grant only so that `RETURNING` can report it.
    package func leaseRateLimit(tenantID: String, _ request: RateLimitLeaseRequest) async throws -> RateLimitLeaseGrant
    {
        let constants = SharedRateLimitBucket.Constants(request.limits)
        var fresh = SharedRateLimitBucket()
        let first = fresh.lease(request)

        var binds = PostgresBindings(capacity: 12)
        binds.append(tenantID)  // $1
        binds.append(request.now)  // $2
        binds.append(constants.interval)  // $3
        binds.append(constants.capacity + constants.tolerance)  // $4
        binds.append(max(1, request.minimum))  // $5
        binds.append(request.maximum)  // $6
        binds.append(request.day)  // $7
        binds.append(request.limits.dailyQuota)  // $8
        binds.append(first.theoreticalArrival)  // $9
        binds.append(first.usedToday)  // $10
        binds.append(first.granted)  // $11
        binds.append(request.returned)  // $12

        let base = "GREATEST(b.theoretical_arrival, $2)"
        let used = "(CASE WHEN b.day = $7 THEN GREATEST(b.used_today - $12, 0) ELSE 0 END)"
        let fit = "LEAST($6::double precision, floor(($4 - (\(base) - $2)) / $3), ($8 - \(used))::double precision)"
        let granted = "(CASE WHEN \(fit) >= $5 THEN \(fit) ELSE 0 END)::bigint"
        let rows = try await rows(
            .assembled(
                """
                INSERT INTO rate_limit_buckets AS b (tenant_id, theoretical_arrival, day, used_today, last_grant)
                VALUES ($1, $9, $7, $10, $11)
                ON CONFLICT (tenant_id) DO UPDATE SET
                    last_grant = \(granted),
                    theoretical_arrival = CASE WHEN \(granted) > 0 THEN \(base) + \(granted) * $3
                        ELSE b.theoretical_arrival END,
                    day = $7,
                    used_today = \(used) + \(granted)
                RETURNING last_grant, theoretical_arrival, day, used_today
                """,
                binds: binds
            )
        )
        guard let row = rows.first else {
            throw StoreError.unavailable("the rate-limit lease for tenant \(tenantID) returned no row")
        }
        let (grantedCount, theoreticalArrival, day, usedToday) = try row.decode((Int, Double, Int64, Int).self)
        return RateLimitLeaseGrant(
            granted: grantedCount,
            theoreticalArrival: theoreticalArrival,
            day: day,
            usedToday: usedToday
        )
    }

    /// ``SharedRateLimitBucket/countBeyondLimits(_:day:)`` in one upsert; a tenant without a row gets one with a full
    /// bucket (theoretical arrival 0) and the day's count.
    package func countBeyondLimits(tenantID: String, day: Int64, count: Int) async throws {
        guard count > 0 else { return }
        try await execute(
            """
            INSERT INTO rate_limit_buckets AS b (tenant_id, theoretical_arrival, day, used_today, last_grant)
            VALUES (\(tenantID), 0, \(day), \(count), 0)
            ON CONFLICT (tenant_id) DO UPDATE SET
                used_today = CASE WHEN b.day = \(day) THEN b.used_today + \(count)
                    WHEN b.day < \(day) THEN \(count) ELSE b.used_today END,
                day = GREATEST(b.day, \(day))
            """
        )
    }
}
