package import Foundation
import GRDB

extension SQLiteStore {
    package func claimInstance(_ lease: InstanceLease, now: Date) async throws -> InstanceLease {
        // One write transaction (IMMEDIATE): no other process on the file reads between the look and the write.
        try await writer.write { db in
            if let row = try Row.fetchOne(
                db,
                sql: "SELECT token, holder, started_at, lease_until FROM instance_leases WHERE instance = ?",
                arguments: [lease.instance])
            {
                let current = InstanceLease(
                    instance: lease.instance, token: row["token"], holder: row["holder"],
                    startedAt: Date(timeIntervalSince1970: row["started_at"]),
                    leaseUntil: Date(timeIntervalSince1970: row["lease_until"]))
                if current.token != lease.token, current.leaseUntil > now { return current }
            }
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO instance_leases (instance, token, holder, started_at, lease_until)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    lease.instance, lease.token, lease.holder, lease.startedAt.unixSeconds,
                    lease.leaseUntil.unixSeconds,
                ])
            return lease
        }
    }

    package func renewInstance(_ instance: String, token: String, until: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE instance_leases SET lease_until = ? WHERE instance = ? AND token = ?",
                arguments: [until.unixSeconds, instance, token])
            return db.changesCount > 0
        }
    }

    package func releaseInstance(_ instance: String, token: String) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "DELETE FROM instance_leases WHERE instance = ? AND token = ?", arguments: [instance, token])
        }
    }
}
