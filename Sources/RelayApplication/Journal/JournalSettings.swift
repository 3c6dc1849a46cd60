import Foundation
import RelayStore

/// How the relay keeps its delivery journal: the key that seals entries, who holds them, and for how long.
///
/// ### Overview
/// A notification that is not final when its ticket is answered (pending at the request's wait deadline, or accepted
/// asynchronously) gets a journal entry in the same group commit as its pending receipt, before the answer leaves;
/// the commit that writes its final receipt deletes the entry. A request answered before its deadline writes no
/// entry at all. After a crash, the next start claims the entries (``Relay/resumeJournal(includingOwn:)``) and
/// sends them again or concludes them (``Resumption``). Several instances on one PostgreSQL database hold entries
/// under leases: a live instance renews the leases of what it is sending (``JournalService``); the entries of one
/// that died are taken over once their leases end.
package struct JournalSettings: Sendable {
    /// Seals every entry (`[store] journal_key_file`).
    package var key: JournalKey
    /// Who holds the entries this relay writes: `[audit] instance`, unique per instance.
    package var instance: String
    /// How long an entry stays held without being renewed.
    package var lease: Duration
    /// How often leases are renewed and ended leases looked for (``JournalService``); well under ``lease``.
    package var sweepInterval: Duration
    /// How long after admission a notification may still be sent after a restart: `[upstream] retry_window_seconds`,
    /// the retry loop's own window; its own time to live or expiration shortens it.
    package var resumeWindow: Duration

    package init(
        key: JournalKey = .random(),
        instance: String = "relay",
        lease: Duration = .seconds(60),
        sweepInterval: Duration = .seconds(20),
        resumeWindow: Duration = .seconds(300)
    ) {
        self.key = key
        self.instance = instance
        self.lease = lease
        self.sweepInterval = sweepInterval
        self.resumeWindow = resumeWindow
    }

    /// The journal entry of a job's notification, sealed, held by this instance from `date` for one lease.
    ///
    /// - Parameters:
    ///   - attempted: Whether its job has begun sending (the entry then counts one more earlier send).
    ///   - released: The lease ends at once (shutdown hands the entry to whoever claims next).
    /// - Throws: When sealing fails (the system's random source).
    func entry(for item: DeliveryJob.Item, attempted: Bool, at date: Date, released: Bool = false) throws
        -> JournalEntry
    {
        let receipt = item.record.receipt
        return JournalEntry(
            receiptID: receipt.id,
            tenantID: receipt.tenantID,
            createdAt: receipt.createdAt,
            deadline: item.deadline,
            attempts: item.earlierAttempts + (attempted ? 1 : 0),
            claimedBy: instance,
            leaseUntil: released ? date : date.addingTimeInterval(Self.seconds(lease)),
            sealed: try key.seal(
                JournalPayload(push: item.push, record: item.record).encoded(), receiptID: receipt.id)
        )
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
