import GRDB

extension SQLiteStore {
    package func commit(_ batch: StoreBatch) async throws {
        guard !batch.isEmpty else { return }
        try await writer.write { db in
            try Self.insert(batch.provisionalReceipts, db: db, replacing: false)
            try Self.insert(batch.receipts, db: db)
            for update in batch.receiptUpdates { try Self.apply(update, db: db) }
            let alreadyFinal = try batch.receiptCloses.filter { try !Self.close($0, db: db) }.map(\.id)
            // Thrown inside the transaction, which GRDB then rolls back: nothing of the batch is written.
            if !alreadyFinal.isEmpty { throw StoreError.receiptsAlreadyFinal(alreadyFinal) }
            try Self.add(batch.usage, db: db)
            try Self.append(batch.audit, db: db)
            try Self.insert(batch.checkpoints, db: db)
            // After the receipts: an entry is written only while its receipt is still pending.
            try Self.journal(batch.journal, db: db)
            try Self.deleteJournal(batch.journalDeletes, db: db)
        }
    }
}
