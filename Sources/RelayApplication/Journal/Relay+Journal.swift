import Foundation
import Logging
import Metrics
import RelayCore
import RelayStore

/// What one round of resuming the delivery journal did.
package struct JournalResumption: Sendable, Equatable {
    /// Entries claimed from the store.
    package var claimed = 0
    /// Notifications handed to the delivery queue to be sent (again).
    package var sent = 0
    /// Notifications past their deadline, concluded without sending.
    package var concluded = 0
    /// Entries sealed under another journal key, left for an instance that has it.
    package var otherKey = 0
    /// Entries that could not be read at all, concluded as unavailable.
    package var unreadable = 0

    package init() {}
}

extension Relay {
    /// Claims delivery journal entries and resumes them: each is sent again (with its `apns-id`), or, past its
    /// deadline, concluded without sending (``Resumption``); either way it ends with a final receipt and an audit
    /// record that says it was resumed, and its entry goes in that commit.
    ///
    /// At start (`includingOwn`, before the listener accepts) it takes the entries this instance held before it
    /// stopped as well as those whose lease has ended; later rounds (``JournalService``) take only ended leases: a
    /// dead instance's, or those this one stopped renewing. It never takes more than the delivery queue has room for,
    /// and never a notification this relay is sending already.
    ///
    /// It only claims and queues: the resumed notifications go to the delivery queue as jobs (those past their
    /// deadline as jobs that send nothing), which write their outcomes through the commit queue once the services
    /// run. So it may be called before they start, and returns without waiting for any outcome.
    ///
    /// - Throws: The store's error when the claim fails.
    @discardableResult
    package func resumeJournal(includingOwn: Bool) async throws -> JournalResumption {
        var summary = JournalResumption()
        let room = queue.room
        guard room > 0 else { return summary }
        let date = clock.date
        let entries = try await store.claimJournal(
            JournalClaim(
                instance: journal.instance,
                now: date,
                leaseUntil: date.addingTimeInterval(JournalSettings.seconds(journal.lease)),
                limit: room,
                includingOwn: includingOwn
            )
        )
        summary.claimed = entries.count
        guard !entries.isEmpty else { return summary }
        // Entries another instance held until its leases ran out: it most likely died without signing its chain's
        // head, which this instance signs for it (each instance's chain is named by its `[audit] instance`, which
        // holds its journal entries).
        let takenOver = Set(entries.map(\.claimedBy)).subtracting([journal.instance])
        if !takenOver.isEmpty { await commits.signHeads(ofChains: takenOver) }
        let inFlight = Set(queue.receiptIDsInFlight(journaledOnly: false))
        var unreadable = RecordWrites()
        var concluded: [DeliveryJob.Item] = []
        var resumable: [DeliveryJob.Item] = []
        for entry in entries where !inFlight.contains(entry.receiptID) {
            let payload: JournalPayload
            do {
                payload = try JournalPayload(decoding: try journal.key.open(entry.sealed, receiptID: entry.receiptID))
            } catch JournalKey.OpenFailure.otherKey {
                // Another instance's key, or one replaced since: left to whoever has it (its lease is not renewed).
                summary.otherKey += 1
                continue
            } catch {
                summary.unreadable += 1
                Self.concludeUnreadable(entry, reason: "\(error)", at: date, into: &unreadable)
                continue
            }
            // Its retries end at the deadline it was admitted with, however often it is resumed.
            var push = payload.push
            push.sendDeadline = entry.deadline
            var item = DeliveryJob.Item(
                index: 0, push: push, record: payload.record, deadline: entry.deadline,
                earlierAttempts: entry.attempts)
            switch Resumption.decide(
                attempts: entry.attempts, deadline: entry.deadline, provider: payload.push.provider, now: date)
            {
            case .conclude(let outcome, let detail):
                item.record.auditDetail = detail
                item.decidedOutcome = outcome
                concluded.append(item)
            case .send(let detail):
                item.record.auditDetail = detail
                resumable.append(item)
            }
        }
        if summary.otherKey > 0 {
            logger.error(
                "Delivery journal entries are sealed under another journal key; left for an instance that has it",
                metadata: ["journal.entries": "\(summary.otherKey)"]
            )
        }
        if summary.unreadable > 0 {
            logger.error(
                "Unreadable delivery journal entries are concluded as unavailable",
                metadata: ["journal.entries": "\(summary.unreadable)"])
        }
        // Everything goes through the delivery queue, which runs it once the services run: this may be called before
        // they start (at start, before the listener accepts), and the commit queue is not running yet.
        if !concluded.isEmpty || !unreadable.audit.isEmpty {
            summary.concluded = submitResumed(concluded, decided: unreadable, oneJob: true)
        }
        summary.sent = submitResumed(resumable)
        Counter(label: "relay_journal_resumed_total", dimensions: [("action", "sent")]).increment(by: summary.sent)
        Counter(label: "relay_journal_resumed_total", dimensions: [("action", "concluded")])
            .increment(by: summary.concluded + summary.unreadable)
        if summary.claimed > 0 {
            logger.info(
                "Resuming notifications from the delivery journal",
                metadata: [
                    "journal.sent": "\(summary.sent)", "journal.concluded": "\(summary.concluded)",
                    "journal.other_key": "\(summary.otherKey)", "journal.unreadable": "\(summary.unreadable)",
                ]
            )
        }
        return summary
    }

    /// Hands resumed notifications to the queue, one job per original request (so that a batch provider sends them
    /// together, and one slow notification holds back only its own request's), or all in `oneJob`; returns how
    /// many were taken.
    private func submitResumed(
        _ items: [DeliveryJob.Item], decided: RecordWrites = RecordWrites(), oneJob: Bool = false
    ) -> Int {
        var taken = 0
        let groups =
            oneJob
            ? [items]
            : Dictionary(grouping: items) { $0.record.requestID ?? $0.record.receipt.id }
                .sorted { $0.key < $1.key }.map(\.value)
        for group in groups {
            let job = DeliveryJob(
                items: group.enumerated().map { position, item in
                    var item = item
                    item.index = position
                    return item
                },
                decided: decided,
                senders: apps,
                commits: commits,
                journal: journal,
                clock: clock,
                logger: logger,
                resumed: true
            )
            do {
                try queue.submit(job, using: try queue.reserve(job.items.count))
                taken += job.items.count
            } catch {
                // Full or shutting down: the entries stay journaled, their leases unrenewed, for a later round.
                break
            }
        }
        return taken
    }

    /// Concludes an entry that cannot be read (damaged, or of a format this relay does not know) as unavailable:
    /// without its content only the receipt id and tenant are known, which is enough for its receipt and audit record.
    private static func concludeUnreadable(
        _ entry: JournalEntry, reason: String, at date: Date, into writes: inout RecordWrites
    ) {
        let outcome = DeliveryOutcome.unavailable(reason: "could not be resumed after a restart", retryAfter: nil)
        writes.batch.receiptUpdates.append(ReceiptUpdate(outcome: outcome, id: entry.receiptID, at: date))
        writes.batch.journalDeletes.append(entry.receiptID)
        writes.audit.append(
            AuditEntry(
                timeMillis: AuditTime.millis(date), event: .push, tenantID: entry.tenantID,
                outcome: outcome.code?.rawValue, upstreamReason: outcome.upstreamReason, attempts: 0,
                detail: "resumed after a restart: its journal entry could not be read (\(reason)); not sent"
            )
        )
    }
}
