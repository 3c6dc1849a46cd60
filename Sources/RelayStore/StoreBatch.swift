package import RelayCore

/// Writes that go to the store together, in one transaction (see ``PushStore/commit(_:)``).
package struct StoreBatch: Sendable, Equatable {
    /// Written whole: a receipt with the same id is replaced.
    package var receipts: [Receipt] = []
    /// Written only where no receipt with the same id exists yet, before ``receipts``: the "pending" a request
    /// answers at its deadline, which must never overwrite an outcome its delivery wrote meanwhile, whichever of the
    /// two commits first.
    package var provisionalReceipts: [Receipt] = []
    package var receiptUpdates: [ReceiptUpdate] = []
    /// Final outcomes for receipts that must still be pending (an Expo receipt closing an accepted notification).
    /// If any of them is no longer pending (another relay on the same database closed it first), the commit writes
    /// nothing and throws ``StoreError/receiptsAlreadyFinal(_:)`` naming them, so that only one relay records it.
    package var receiptCloses: [ReceiptUpdate] = []
    /// Added to the stored counters.
    package var usage: [UsageKey: UsageCounts] = [:]
    /// Appended to the audit log in this order; each chain's records continue its stored head.
    package var audit: [AuditRecord] = []
    package var checkpoints: [AuditCheckpoint] = []
    /// Delivery journal entries (``JournalEntry``), written after the batch's receipts, and only where the entry's
    /// receipt is then pending without an Expo ticket: an entry never outlives the final receipt of its notification,
    /// whichever of the two commits comes first. An entry with the same receipt id is replaced.
    package var journal: [JournalEntry] = []
    /// The receipt ids whose journal entries go, after ``journal``'s writes: the notifications are final (or Expo
    /// has their ticket).
    package var journalDeletes: [String] = []

    package init(
        receipts: [Receipt] = [],
        provisionalReceipts: [Receipt] = [],
        receiptUpdates: [ReceiptUpdate] = [],
        receiptCloses: [ReceiptUpdate] = [],
        usage: [UsageKey: UsageCounts] = [:],
        audit: [AuditRecord] = [],
        checkpoints: [AuditCheckpoint] = [],
        journal: [JournalEntry] = [],
        journalDeletes: [String] = []
    ) {
        self.receipts = receipts
        self.provisionalReceipts = provisionalReceipts
        self.receiptUpdates = receiptUpdates
        self.receiptCloses = receiptCloses
        self.usage = usage
        self.audit = audit
        self.checkpoints = checkpoints
        self.journal = journal
        self.journalDeletes = journalDeletes
    }

    package var isEmpty: Bool {
        receipts.isEmpty && provisionalReceipts.isEmpty && receiptUpdates.isEmpty && receiptCloses.isEmpty
            && usage.isEmpty && audit.isEmpty && checkpoints.isEmpty && journal.isEmpty && journalDeletes.isEmpty
    }

    /// Adds `other`'s writes after this batch's.
    package mutating func append(_ other: StoreBatch) {
        receipts += other.receipts
        provisionalReceipts += other.provisionalReceipts
        receiptUpdates += other.receiptUpdates
        receiptCloses += other.receiptCloses
        usage.merge(other.usage, uniquingKeysWith: +)
        audit += other.audit
        checkpoints += other.checkpoints
        journal += other.journal
        journalDeletes += other.journalDeletes
    }

    /// Counts one notification's outcome in the usage counters.
    package mutating func count(_ counts: UsageCounts, for key: UsageKey) {
        usage[key, default: UsageCounts()] = usage[key, default: UsageCounts()] + counts
    }
}
