import PostgresNIO
package import RelayStore

extension PostgresStore {
    package func commit(_ batch: StoreBatch) async throws {
        guard !batch.isEmpty else { return }
        let statements =
            Self.insertStatements(batch.provisionalReceipts, replacing: false) + Self.insertStatements(batch.receipts)
            + Self.updateStatements(batch.receiptUpdates)
            + Self.usageStatements(batch.usage) + Self.auditStatements(batch.audit)
            + Self.checkpointStatements(batch.checkpoints)
            // After the receipts: an entry is written only while its receipt is still pending.
            + Self.journalStatements(batch.journal) + Self.journalDeleteStatements(batch.journalDeletes)
        guard !statements.isEmpty || !batch.receiptCloses.isEmpty else { return }
        try await transaction { transaction in
            var alreadyFinal: [String] = []
            for update in batch.receiptCloses where try await !Self.close(update, in: transaction) {
                alreadyFinal.append(update.id)
            }
            // Thrown inside the transaction, which then rolls back: nothing of the batch is written.
            if !alreadyFinal.isEmpty { throw StoreError.receiptsAlreadyFinal(alreadyFinal) }
            for statement in statements { try await transaction.execute(statement) }
        }
    }
}
