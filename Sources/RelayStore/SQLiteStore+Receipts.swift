package import Foundation
import GRDB
import RelayCore

extension SQLiteStore {
    private static let receiptColumns = """
        id, tenant_id, key_id, provider, token_fingerprint, is_critical, status, error_code, message, remove_token, \
        provider_message_id, expo_ticket_id, created_at, updated_at, expires_at, app, live_activity_event
        """

    /// SQLite before 3.32 allowed 999 parameters per statement; 500 ids stay well inside any build.
    private static let lookupChunkSize = 500
    /// Expired receipts are deleted this many per transaction, so pruning never holds the writer for long.
    private static let pruneBatchSize = 5_000

    /// Inserts `receipts` inside the caller's transaction.
    ///
    /// - Parameter replacing: Whether a receipt with the same id is replaced (as in `MemoryStore`) or kept
    ///   (``StoreBatch/provisionalReceipts``).
    static func insert(_ receipts: [Receipt], db: Database, replacing: Bool = true) throws {
        guard !receipts.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR \(replacing ? "REPLACE" : "IGNORE") INTO receipts (\(Self.receiptColumns))
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        // One receipt per notification: bound through SQLite's C API (`SQLiteRowWriter` says why).
        var row = SQLiteRowWriter(statement, in: db)
        for receipt in receipts {
            try row.bind(receipt.id)
            try row.bind(receipt.tenantID)
            try row.bind(receipt.keyID)
            try row.bind(receipt.provider.rawValue)
            try row.bind(receipt.tokenFingerprint)
            try row.bind(receipt.isCritical)
            try row.bind(receipt.status.rawValue)
            try row.bind(receipt.errorCode)
            try row.bind(receipt.message)
            try row.bind(receipt.removeToken)
            try row.bind(receipt.providerMessageID)
            try row.bind(receipt.expoTicketID)
            try row.bind(receipt.createdAt.unixSeconds)
            try row.bind(receipt.updatedAt.unixSeconds)
            try row.bind(receipt.expiresAt.unixSeconds)
            try row.bind(receipt.app)
            try row.bind(receipt.liveActivityEvent?.rawValue)
            try row.step()
        }
    }

    package func pendingReceipt(expoTicketID: String) async throws -> Receipt? {
        try await writer.read { db in
            // The conditions match the partial index `receipts_pending_by_expo_ticket`.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(Self.receiptColumns) FROM receipts
                    WHERE expo_ticket_id = ? AND status = 'pending' AND expo_ticket_id IS NOT NULL LIMIT 1
                    """
            )
            return try Row.fetchOne(statement, arguments: [expoTicketID]).map(Receipt.init(row:))
        }
    }

    /// Applies `update` to its receipt, if there is one: the rules of ``Receipt/apply(_:)``.
    static func apply(_ update: ReceiptUpdate, db: Database) throws {
        try write(update, db: db, condition: "")
    }

    /// Applies `update` only to a receipt still pending; `false` when there is none (closed already, or unknown).
    static func close(_ update: ReceiptUpdate, db: Database) throws -> Bool {
        try write(update, db: db, condition: " AND status = 'pending'")
        return db.changesCount > 0
    }

    private static func write(_ update: ReceiptUpdate, db: Database, condition: String) throws {
        // A known provider message id is kept when the update brings none.
        let statement = try db.cachedStatement(
            sql: """
                UPDATE receipts SET status = ?, error_code = ?, message = ?, remove_token = ?,
                    provider_message_id = COALESCE(?, provider_message_id), expo_ticket_id = ?, updated_at = ?
                WHERE id = ?
                """ + condition
        )
        try statement.execute(arguments: [
            update.status.rawValue, update.errorCode, update.message, update.removeToken, update.providerMessageID,
            update.expoTicketID, update.updatedAt.unixSeconds, update.id,
        ])
    }

    package func receipts(ids: [String], tenantID: String) async throws -> [Receipt] {
        guard !ids.isEmpty else { return [] }
        let unique = Array(Set(ids))
        let found = try await writer.read { db in
            var found: [String: Receipt] = [:]
            var start = unique.startIndex
            while start < unique.endIndex {
                let chunk = unique[start..<min(start + Self.lookupChunkSize, unique.endIndex)]
                start = chunk.endIndex
                guard let last = chunk.last else { break }
                // Padded to a power of two with a repeated id, so a handful of statements serve every count.
                let width = min(Self.lookupChunkSize, 1 << (Int.bitWidth - (chunk.count - 1).leadingZeroBitCount))
                let placeholders = repeatElement("?", count: width).joined(separator: ", ")
                let statement = try db.cachedStatement(
                    sql: "SELECT \(Self.receiptColumns) FROM receipts WHERE id IN (\(placeholders)) AND tenant_id = ?"
                )
                var arguments = StatementArguments(chunk)
                arguments += StatementArguments(repeatElement(last, count: width - chunk.count))
                arguments += [tenantID]
                for row in try Row.fetchAll(statement, arguments: arguments) {
                    let receipt = try Receipt(row: row)
                    found[receipt.id] = receipt
                }
            }
            return found
        }
        // In the order asked, as `MemoryStore` answers.
        return ids.compactMap { found[$0] }
    }

    package func pruneReceipts(now: Date) async throws -> Int {
        let cutoff = now.unixSeconds
        var total = 0
        while true {
            let deleted = try await writer.write { db in
                let statement = try db.cachedStatement(
                    sql: """
                        DELETE FROM receipts WHERE id IN (
                            SELECT id FROM receipts WHERE expires_at < ? ORDER BY expires_at LIMIT ?
                        )
                        """
                )
                try statement.execute(arguments: [cutoff, Self.pruneBatchSize])
                return db.changesCount
            }
            total += deleted
            if deleted < Self.pruneBatchSize { return total }
        }
    }

    // MARK: - Expo receipts

    package func pendingExpoTickets(sentBefore: Date, limit: Int, app: String?) async throws -> [String] {
        guard limit > 0 else { return [] }
        return try await writer.read { db in
            // The literal conditions match the partial index `receipts_pending_expo_by_created`.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT expo_ticket_id FROM receipts
                    WHERE status = 'pending' AND expo_ticket_id IS NOT NULL AND created_at < ?
                    \(app == nil ? "" : "AND app = ?") ORDER BY created_at LIMIT ?
                    """
            )
            let arguments: StatementArguments =
                if let app { [sentBefore.unixSeconds, app, limit] } else { [sentBefore.unixSeconds, limit] }
            return try String.fetchAll(statement, arguments: arguments)
        }
    }
}
