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
        guard !statements.isEmpty else { return }
        try await transaction { transaction in
            for statement in statements { try await transaction.execute(statement) }
        }
    }
}
