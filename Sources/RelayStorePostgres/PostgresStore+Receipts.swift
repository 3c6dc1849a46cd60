package import Foundation
import PostgresNIO
import RelayCore
package import RelayStore

extension PostgresStore {
    private static let receiptColumnNames = [
        "id", "tenant_id", "key_id", "provider", "token_fingerprint", "is_critical", "status", "error_code", "message",
        "remove_token", "provider_message_id", "expo_ticket_id", "created_at", "updated_at", "expires_at",
        "app", "live_activity_event",
    ]
    private static let receiptColumns = receiptColumnNames.joined(separator: ", ")

    /// Rows per multi-row statement (receipts, receipt updates, usage): 1,000 receipts bind 17,000 parameters, well
    /// inside PostgreSQL's 65,535.
    static let rowsPerStatement = 1_000
    /// Expired receipts are deleted this many per statement, so pruning never holds many row locks for long.
    private static let pruneBatchSize = 5_000

    package func receipts(ids: [String], tenantID: String) async throws -> [Receipt] {
        guard !ids.isEmpty else { return [] }
        let unique = Array(Set(ids))
        var found: [String: Receipt] = [:]
        for row in try await rows(
            """
            SELECT \(unescaped: Self.receiptColumns) FROM receipts WHERE id = ANY(\(unique)) AND tenant_id = \(tenantID)
            """
        ) {
            let receipt = try Receipt(row: row)
            found[receipt.id] = receipt
        }
        // In the order asked, as `MemoryStore` answers.
        return ids.compactMap { found[$0] }
    }

    package func pruneReceipts(now: Date) async throws -> Int {
        let cutoff = now.unixSeconds
        var total = 0
        while true {
            // `SKIP LOCKED`: relays pruning at the same moment take different receipts instead of waiting.
            let rows = try await rows(
                """
                WITH doomed AS (
                    SELECT id FROM receipts WHERE expires_at < \(cutoff) ORDER BY expires_at
                    LIMIT \(Self.pruneBatchSize) FOR UPDATE SKIP LOCKED
                ), deleted AS (
                    DELETE FROM receipts WHERE id IN (SELECT id FROM doomed) RETURNING 1
                )
                SELECT count(*) FROM deleted
                """
            )
            let deleted = try rows.first?.decode(Int.self) ?? 0
            total += deleted
            if deleted < Self.pruneBatchSize { return total }
        }
    }

    // MARK: - Expo receipts

    package func pendingExpoTickets(sentBefore: Date, limit: Int, app: String?) async throws -> [String] {
        guard limit > 0 else { return [] }
        // The literal conditions match the partial index `receipts_pending_expo_by_created`; `app` is NULL for every
        // app.
        return try await rows(
            """
            SELECT expo_ticket_id FROM receipts
            WHERE status = 'pending' AND expo_ticket_id IS NOT NULL AND created_at < \(sentBefore.unixSeconds)
                AND (\(app)::text IS NULL OR app = \(app))
            ORDER BY created_at LIMIT \(limit)
            """
        ).map { try $0.decode(String.self) }
    }

    package func pendingReceipt(expoTicketID: String) async throws -> Receipt? {
        // The conditions match the partial index `receipts_pending_by_expo_ticket`.
        try await rows(
            """
            SELECT \(unescaped: Self.receiptColumns) FROM receipts
            WHERE expo_ticket_id = \(expoTicketID) AND status = 'pending' AND expo_ticket_id IS NOT NULL LIMIT 1
            """
        ).first.map { try Receipt(row: $0) }
    }

    /// Applies `update` only to a receipt still pending; `false` when there is none. A second relay closing the same
    /// receipt at once waits for the first one's row lock, then finds it no longer pending and changes nothing.
    static func close(_ update: ReceiptUpdate, in transaction: Transaction) async throws -> Bool {
        let closed = try await transaction.rows(
            """
            UPDATE receipts SET status = \(update.status.rawValue), error_code = \(update.errorCode),
                message = \(update.message), remove_token = \(update.removeToken),
                provider_message_id = COALESCE(\(update.providerMessageID), provider_message_id),
                expo_ticket_id = \(update.expoTicketID), updated_at = \(update.updatedAt.unixSeconds)
            WHERE id = \(update.id) AND status = 'pending'
            RETURNING id
            """
        )
        return !closed.isEmpty
    }

    // MARK: - Statements

    /// Multi-row upserts: a receipt id again replaces the receipt, as in `MemoryStore` (within one call, the last
    /// receipt with an id wins; PostgreSQL refuses to upsert one row twice in a statement). Without `replacing`, a
    /// stored receipt is kept instead (``StoreBatch/provisionalReceipts``).
    static func insertStatements(_ receipts: [Receipt], replacing: Bool = true) -> [PostgresQuery] {
        guard !receipts.isEmpty else { return [] }
        let unique = lastPerKey(receipts, key: \.id)
        let width = receiptColumnNames.count
        let replace = receiptColumnNames.dropFirst().map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        return stride(from: 0, to: unique.count, by: rowsPerStatement).map { start in
            let chunk = unique[start..<min(start + rowsPerStatement, unique.count)]
            var binds = PostgresBindings(capacity: chunk.count * width)
            var values: [String] = []
            values.reserveCapacity(chunk.count)
            for receipt in chunk {
                values.append(PostgresBindings.placeholders(from: binds.count + 1, count: width))
                binds.append(receipt.id)
                binds.append(receipt.tenantID)
                binds.append(receipt.keyID)
                binds.append(receipt.provider.rawValue)
                binds.append(receipt.tokenFingerprint)
                binds.append(receipt.isCritical)
                binds.append(receipt.status.rawValue)
                binds.append(receipt.errorCode)
                binds.append(receipt.message)
                binds.append(receipt.removeToken)
                binds.append(receipt.providerMessageID)
                binds.append(receipt.expoTicketID)
                binds.append(receipt.createdAt.unixSeconds)
                binds.append(receipt.updatedAt.unixSeconds)
                binds.append(receipt.expiresAt.unixSeconds)
                binds.append(receipt.app)
                binds.append(receipt.liveActivityEvent?.rawValue)
            }
            return .assembled(
                """
                INSERT INTO receipts (\(receiptColumns)) VALUES \(values.joined(separator: ", "))
                ON CONFLICT (id) \(replacing ? "DO UPDATE SET " + replace : "DO NOTHING")
                """,
                binds: binds
            )
        }
    }

    /// Updates from a `VALUES` list, by id: the rules of ``Receipt/apply(_:)``. Several updates of one receipt in a
    /// call are folded into one first, as applying them in order would leave it.
    static func updateStatements(_ updates: [ReceiptUpdate]) -> [PostgresQuery] {
        guard !updates.isEmpty else { return [] }
        var folded: [String: ReceiptUpdate] = [:]
        for update in updates {
            var merged = update
            // A known provider message id is kept when a later update brings none.
            if merged.providerMessageID == nil { merged.providerMessageID = folded[update.id]?.providerMessageID }
            folded[update.id] = merged
        }
        // In id order, so that concurrent commits lock shared rows in the same order and cannot deadlock.
        let ordered = folded.values.sorted { $0.id < $1.id }
        let types = ["text", "text", "text", "text", "boolean", "text", "text", "double precision"]
        return stride(from: 0, to: ordered.count, by: rowsPerStatement).map { start in
            let chunk = ordered[start..<min(start + rowsPerStatement, ordered.count)]
            var binds = PostgresBindings(capacity: chunk.count * types.count)
            var values: [String] = []
            values.reserveCapacity(chunk.count)
            for update in chunk {
                values.append(PostgresBindings.placeholders(from: binds.count + 1, count: types.count, types: types))
                binds.append(update.id)
                binds.append(update.status.rawValue)
                binds.append(update.errorCode)
                binds.append(update.message)
                binds.append(update.removeToken)
                binds.append(update.providerMessageID)
                binds.append(update.expoTicketID)
                binds.append(update.updatedAt.unixSeconds)
            }
            return .assembled(
                """
                UPDATE receipts AS r SET status = u.status, error_code = u.error_code, message = u.message,
                    remove_token = u.remove_token,
                    provider_message_id = COALESCE(u.provider_message_id, r.provider_message_id),
                    expo_ticket_id = u.expo_ticket_id, updated_at = u.updated_at
                FROM (VALUES \(values.joined(separator: ", ")))
                    AS u (id, status, error_code, message, remove_token, provider_message_id, expo_ticket_id,
                        updated_at)
                WHERE r.id = u.id
                """,
                binds: binds
            )
        }
    }
}
