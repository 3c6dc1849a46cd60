package import Foundation

/// One notification the relay accepted and has not concluded yet, as the delivery journal keeps it, so that a relay
/// that starts after a crash sends it (again) to a final receipt.
///
/// The store sees only what it needs to hand entries out: which receipt the entry concludes, its tenant, its dates,
/// how often it was handed to a sender, and who holds it. Everything needed to send it (the device token, the
/// content, the `apns-id`) is in ``sealed``, encrypted by the relay before it reaches the store (AES-GCM under the
/// journal key): the store, its WAL and its backups never hold a token or content in clear.
///
/// An entry is written only while its receipt is pending without an Expo ticket (``StoreBatch/journal``), and
/// deleted in the commit that writes its final receipt (``StoreBatch/journalDeletes``).
package struct JournalEntry: Sendable, Equatable {
    /// The receipt the notification concludes: one entry per receipt.
    package var receiptID: String
    package var tenantID: String
    /// When the relay admitted the notification.
    package var createdAt: Date
    /// When it may no longer be sent: its own time to live or expiration, capped by the relay's resume window.
    package var deadline: Date
    /// How often a relay began sending it before this entry was written or claimed: 0 when it was journaled before
    /// its first send (accepted asynchronously), so that it was perhaps never sent.
    package var attempts: Int
    /// The instance (`[audit] instance`) that holds it: the one sending it now, or the last one that did.
    package var claimedBy: String
    /// Until when ``claimedBy`` holds it. A live instance renews its leases; after this, another instance (or the same
    /// one after a restart) may claim it and send it.
    package var leaseUntil: Date
    /// The notification itself, encrypted and authenticated; opaque to the store.
    package var sealed: [UInt8]

    package init(
        receiptID: String,
        tenantID: String,
        createdAt: Date,
        deadline: Date,
        attempts: Int,
        claimedBy: String,
        leaseUntil: Date,
        sealed: [UInt8]
    ) {
        self.receiptID = receiptID
        self.tenantID = tenantID
        self.createdAt = createdAt
        self.deadline = deadline
        self.attempts = attempts
        self.claimedBy = claimedBy
        self.leaseUntil = leaseUntil
        self.sealed = sealed
    }
}

/// How many notifications the journal holds, and since when the oldest waits (the journal's metrics).
package struct JournalStatistics: Sendable, Equatable {
    package var entries: Int
    /// When the oldest entry's notification was admitted; `nil` when the journal is empty.
    package var oldest: Date?

    package init(entries: Int, oldest: Date?) {
        self.entries = entries
        self.oldest = oldest
    }
}

/// Which entries ``PushStore/claimJournal(_:)`` takes.
package struct JournalClaim: Sendable, Equatable {
    /// The instance that claims them; it becomes their ``JournalEntry/claimedBy``.
    package var instance: String
    /// Entries whose lease has ended by this time are free to claim.
    package var now: Date
    /// The claimed entries' new lease.
    package var leaseUntil: Date
    /// At most this many, oldest first.
    package var limit: Int
    /// Whether entries ``instance`` holds under a lease that has not ended are taken too: at start, when nothing the
    /// instance held before is in its memory any more.
    package var includingOwn: Bool

    package init(instance: String, now: Date, leaseUntil: Date, limit: Int, includingOwn: Bool = false) {
        self.instance = instance
        self.now = now
        self.leaseUntil = leaseUntil
        self.limit = limit
        self.includingOwn = includingOwn
    }
}
