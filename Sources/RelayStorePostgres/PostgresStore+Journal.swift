package import Foundation
import PostgresNIO
package import RelayStore

extension PostgresStore {
    private static let journalColumnNames = [
        "receipt_id", "tenant_id", "created_at", "deadline", "attempts", "claimed_by", "lease_until", "sealed",
    ]
    private static let journalColumns = journalColumnNames.joined(separator: ", ")
    private static let journalColumnTypes = [
        "text", "text", "double precision", "double precision", "bigint", "text", "double precision", "bytea",
    ]

    /// Multi-row upserts of journal entries, each only where its receipt is pending without an Expo ticket (see
    /// ``StoreBatch/journal``). Within one call the last entry for a receipt wins.
    static func journalStatements(_ entries: [JournalEntry]) -> [PostgresQuery] {
        guard !entries.isEmpty else { return [] }
        let unique = lastPerKey(entries, key: \.receiptID)
        let width = journalColumnNames.count
        let replace = journalColumnNames.dropFirst().map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        return stride(from: 0, to: unique.count, by: rowsPerStatement).map { start in
            let chunk = unique[start..<min(start + rowsPerStatement, unique.count)]
            var binds = PostgresBindings(capacity: chunk.count * width)
            var values: [String] = []
            values.reserveCapacity(chunk.count)
            for entry in chunk {
                values.append(
                    PostgresBindings.placeholders(from: binds.count + 1, count: width, types: journalColumnTypes))
                binds.append(entry.receiptID)
                binds.append(entry.tenantID)
                binds.append(entry.createdAt.unixSeconds)
                binds.append(entry.deadline.unixSeconds)
                binds.append(entry.attempts)
                binds.append(entry.claimedBy)
                binds.append(entry.leaseUntil.unixSeconds)
                binds.append(ByteBuffer(bytes: entry.sealed))
            }
            return .assembled(
                """
                INSERT INTO delivery_journal (\(journalColumns))
                SELECT v.* FROM (VALUES \(values.joined(separator: ", "))) AS v (\(journalColumns))
                JOIN receipts AS r ON r.id = v.receipt_id AND r.status = 'pending' AND r.expo_ticket_id IS NULL
                ON CONFLICT (receipt_id) DO UPDATE SET \(replace)
                """,
                binds: binds
            )
        }
    }

    /// Deletes the entries of `receiptIDs`.
    static func journalDeleteStatements(_ receiptIDs: [String]) -> [PostgresQuery] {
        guard !receiptIDs.isEmpty else { return [] }
        return stride(from: 0, to: receiptIDs.count, by: rowsPerStatement).map { start in
            let chunk = Array(receiptIDs[start..<min(start + rowsPerStatement, receiptIDs.count)])
            return "DELETE FROM delivery_journal WHERE receipt_id = ANY(\(chunk))"
        }
    }

    package func claimJournal(_ claim: JournalClaim) async throws -> [JournalEntry] {
        guard claim.limit > 0 else { return [] }
        // `FOR UPDATE SKIP LOCKED`: instances claiming at once take different entries. One that finds an entry
        // locked skips it; one that locks it after another's claim committed sees the new lease, which no longer
        // matches, and leaves it. The outer select reads the rows as they were before this claim.
        return try await rows(
            """
            WITH claimable AS (
                SELECT \(unescaped: Self.journalColumns) FROM delivery_journal
                WHERE lease_until <= \(claim.now.unixSeconds)
                    OR (\(claim.includingOwn) AND claimed_by = \(claim.instance))
                ORDER BY created_at, receipt_id LIMIT \(claim.limit)
                FOR UPDATE SKIP LOCKED
            ), claimed AS (
                UPDATE delivery_journal AS j
                SET claimed_by = \(claim.instance), lease_until = \(claim.leaseUntil.unixSeconds),
                    attempts = j.attempts + 1
                FROM claimable AS c WHERE j.receipt_id = c.receipt_id
            )
            SELECT \(unescaped: Self.journalColumns) FROM claimable ORDER BY created_at, receipt_id
            """
        ).map { try JournalEntry(row: $0) }
    }

    package func renewJournalLeases(receiptIDs: [String], instance: String, until: Date) async throws -> Int {
        guard !receiptIDs.isEmpty else { return 0 }
        var renewed = 0
        let unique = Array(Set(receiptIDs)).sorted()
        for start in stride(from: 0, to: unique.count, by: Self.rowsPerStatement) {
            let chunk = Array(unique[start..<min(start + Self.rowsPerStatement, unique.count)])
            renewed += try await rows(
                """
                UPDATE delivery_journal SET lease_until = \(until.unixSeconds)
                WHERE receipt_id = ANY(\(chunk)) AND claimed_by = \(instance)
                RETURNING receipt_id
                """
            ).count
        }
        return renewed
    }

    package func journalStatistics(tenantID: String?) async throws -> JournalStatistics {
        let query: PostgresQuery =
            if let tenantID {
                """
                SELECT count(*) AS entries, min(created_at) AS oldest FROM delivery_journal
                WHERE tenant_id = \(tenantID)
                """
            } else {
                "SELECT count(*) AS entries, min(created_at) AS oldest FROM delivery_journal"
            }
        guard let row = try await rows(query).first?.makeRandomAccess()
        else { return JournalStatistics(entries: 0, oldest: nil) }
        return JournalStatistics(
            entries: try row.value("entries", as: Int.self), oldest: try row.dateIfPresent("oldest"))
    }
}

extension JournalEntry {
    init(row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        self.init(
            receiptID: try row.value("receipt_id"),
            tenantID: try row.value("tenant_id"),
            createdAt: try row.date("created_at"),
            deadline: try row.date("deadline"),
            attempts: try row.value("attempts", as: Int.self),
            claimedBy: try row.value("claimed_by"),
            leaseUntil: try row.date("lease_until"),
            sealed: [UInt8](try row.value("sealed", as: Data.self))
        )
    }
}
