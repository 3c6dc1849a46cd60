package import Foundation
import PostgresNIO
package import RelayStore

extension PostgresStore {
    /// One upsert that takes the lease only when it has run out or is this token's (the row lock decides between
    /// processes claiming at once); when it returns no row, another holds it, and it is read.
    package func claimInstance(_ lease: InstanceLease, now: Date) async throws -> InstanceLease {
        let taken = try await rows(
            """
            INSERT INTO instance_leases AS l (instance, token, holder, started_at, lease_until)
            VALUES (\(lease.instance), \(lease.token), \(lease.holder), \(lease.startedAt.unixSeconds),
                \(lease.leaseUntil.unixSeconds))
            ON CONFLICT (instance) DO UPDATE SET token = EXCLUDED.token, holder = EXCLUDED.holder,
                started_at = EXCLUDED.started_at, lease_until = EXCLUDED.lease_until
            WHERE l.lease_until <= \(now.unixSeconds) OR l.token = EXCLUDED.token
            RETURNING token
            """
        )
        if !taken.isEmpty { return lease }
        let current = try await rows(
            """
            SELECT token, holder, started_at, lease_until FROM instance_leases WHERE instance = \(lease.instance)
            """
        )
        guard let row = current.first else {
            // Given back between the two statements: try again.
            return try await claimInstance(lease, now: now)
        }
        let (token, holder, startedAt, leaseUntil) = try row.decode((String, String, Double, Double).self)
        return InstanceLease(
            instance: lease.instance, token: token, holder: holder,
            startedAt: Date(timeIntervalSince1970: startedAt), leaseUntil: Date(timeIntervalSince1970: leaseUntil))
    }

    package func renewInstance(_ instance: String, token: String, until: Date) async throws -> Bool {
        let renewed = try await rows(
            """
            UPDATE instance_leases SET lease_until = \(until.unixSeconds)
            WHERE instance = \(instance) AND token = \(token) RETURNING token
            """
        )
        return !renewed.isEmpty
    }

    package func releaseInstance(_ instance: String, token: String) async throws {
        try await execute("DELETE FROM instance_leases WHERE instance = \(instance) AND token = \(token)")
    }
}
