package import Foundation
import GRDB

extension SQLiteStore {
    private static let journalColumns =
        "receipt_id, tenant_id, created_at, deadline, attempts, claimed_by, lease_until, sealed"

    /// Writes `entries` inside the caller's transaction, each only where its receipt is pending without an Expo
    /// ticket (see ``StoreBatch/journal``).
    static func journal(_ entries: [JournalEntry], db: Database) throws {
        guard !entries.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO delivery_journal (\(journalColumns))
                SELECT ?, ?, ?, ?, ?, ?, ?, ?
                WHERE EXISTS (
                    SELECT 1 FROM receipts WHERE id = ?1 AND status = 'pending' AND expo_ticket_id IS NULL
                )
                """
        )
        for entry in entries {
            try statement.execute(arguments: [
                entry.receiptID, entry.tenantID, entry.createdAt.unixSeconds, entry.deadline.unixSeconds,
                entry.attempts, entry.claimedBy, entry.leaseUntil.unixSeconds, Data(entry.sealed),
            ])
        }
    }

    /// Deletes the entries of `receiptIDs` inside the caller's transaction.
    static func deleteJournal(_ receiptIDs: [String], db: Database) throws {
        guard !receiptIDs.isEmpty else { return }
        let statement = try db.cachedStatement(sql: "DELETE FROM delivery_journal WHERE receipt_id = ?")
        for id in receiptIDs { try statement.execute(arguments: [id]) }
    }

    package func claimJournal(_ claim: JournalClaim) async throws -> [JournalEntry] {
        guard claim.limit > 0 else { return [] }
        // One write transaction, which GRDB begins IMMEDIATE: the read and the update see no other writer, even from
        // another process on the same file.
        return try await writer.write { db in
            let claimed = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.journalColumns) FROM delivery_journal
                    WHERE lease_until <= ? OR (? AND claimed_by = ?)
                    ORDER BY created_at, receipt_id LIMIT ?
                    """,
                arguments: [claim.now.unixSeconds, claim.includingOwn, claim.instance, claim.limit]
            ).map(JournalEntry.init(row:))
            let update = try db.cachedStatement(
                sql: """
                    UPDATE delivery_journal SET claimed_by = ?, lease_until = ?, attempts = attempts + 1
                    WHERE receipt_id = ?
                    """
            )
            for entry in claimed {
                try update.execute(arguments: [claim.instance, claim.leaseUntil.unixSeconds, entry.receiptID])
            }
            return claimed
        }
    }

    package func renewJournalLeases(receiptIDs: [String], instance: String, until: Date) async throws -> Int {
        guard !receiptIDs.isEmpty else { return 0 }
        return try await writer.write { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE delivery_journal SET lease_until = ? WHERE receipt_id = ? AND claimed_by = ?"
            )
            var renewed = 0
            for id in Set(receiptIDs) {
                try statement.execute(arguments: [until.unixSeconds, id, instance])
                renewed += db.changesCount
            }
            return renewed
        }
    }

    package func journalStatistics(tenantID: String?) async throws -> JournalStatistics {
        try await writer.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*) AS entries, min(created_at) AS oldest FROM delivery_journal
                    WHERE ?1 IS NULL OR tenant_id = ?1
                    """,
                arguments: [tenantID])
            let entries: Int = try row?.decode(forColumn: "entries") ?? 0
            let oldest: Double? = try row?.decode(forColumn: "oldest")
            return JournalStatistics(entries: entries, oldest: oldest.map(Date.init(timeIntervalSince1970:)))
        }
    }
}
