/// Store failures callers can act on.
package enum StoreError: Error, Sendable, Equatable {
    /// A tenant with this name, or a key with this id, already exists.
    case duplicate(String)
    case notFound(String)
    /// The store URL or file is unusable.
    case unavailable(String)
    /// A commit's ``StoreBatch/receiptCloses`` named receipts (these ids) that are no longer pending; nothing of the
    /// commit was written.
    case receiptsAlreadyFinal([String])
}
