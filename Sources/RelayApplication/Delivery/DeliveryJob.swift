import Foundation
import Logging
import Metrics
package import RelayCore
package import RelayProviders
import RelayStore
import Synchronization

/// The notifications of one relay request that go upstream, their outcomes as they arrive, and the callers waiting.
///
/// A job runs in ``DeliveryQueue``'s task group, not in the request's task: a request stops waiting at its deadline,
/// the job goes on until every notification has an outcome and the store has it. So a slow upstream never loses an
/// accepted push.
///
/// The job writes the request's receipts, usage and audit records once, in one group commit after the last outcome:
/// receipts with their outcomes, and those of the request's refused notifications (the plan's ``RecordWrites``). A
/// request that answers before that (its deadline) stores ``provisionalWrites(at:)`` first: receipts as they
/// stand, which never overwrite an outcome, and delivery journal entries for the notifications not concluded, so that a
/// relay starting after a crash resumes them (``JournalSettings``).
///
/// ### Journal
/// Whether its notifications may have journal entries is decided under the job's lock, against its conclusion: a
/// journal write is made only while the job has not begun to write its outcomes (``State/concluding``), and once one
/// is made (``State/journaled``), the job's final commit deletes the entries of the notifications it concludes. The
/// store writes an entry only where its receipt is still pending (``StoreBatch/journal``), so whichever of the two
/// commits comes first, no entry outlives its final receipt. A request answered before its deadline makes no journal
/// write at all.
final class DeliveryJob: Sendable {
    struct Item: Sendable {
        var index: Int
        var push: ResolvedPush
        /// The notification's record, with its receipt pending until the sender's report concludes it.
        var record: NotificationRecord
        /// When it may no longer be sent (``Resumption/deadline(of:admittedAt:window:)``): what a journal entry keeps.
        var deadline: Date
        /// Sends begun by relays before this one: a resumed notification's journal entry says; 0 for a new one.
        var earlierAttempts = 0
        /// Its outcome, decided without sending (a resumed notification found past its deadline): the job reports
        /// it as it is, with no attempt, and sends nothing.
        var decidedOutcome: DeliveryOutcome?
    }

    /// What a waiting request learns.
    struct Progress: Sendable {
        /// The outcomes known, by item index.
        var reports: [Int: DeliveryReport]
        /// Whether the job has ended: every outcome known and the commit of its writes over.
        var finished: Bool
    }

    private struct State {
        var reports: [Int: DeliveryReport] = [:]
        var done = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        /// ``run()`` has begun: its notifications may be on the wire.
        var started = false
        /// ``run()`` is writing its outcomes: nothing more is journaled, its commit is on its way.
        var concluding = false
        /// Journal entries may exist for its notifications: its final commit deletes those it concludes.
        var journaled = false
        /// Shutdown journaled the notifications without an outcome (``journalUnfinished()``): reports arriving later
        /// are not recorded, the next start resumes those notifications.
        var abandoned = false
    }

    let items: [Item]
    /// What the request decided before sending (its refused notifications: receipts, usage, audit records), written
    /// with the outcomes.
    private let decided: RecordWrites
    private let state: Mutex<State>
    private let senders: AppSenders
    private let commits: CommitQueue
    private let journal: JournalSettings
    private let clock: RelayClock
    private let logger: Logger

    /// - Parameters:
    ///   - decided: Writes made before sending that go with the outcomes: the request's refused notifications (or,
    ///     for resumed notifications, the journal entries that could not be read).
    ///   - resumed: The items were claimed from the journal (their entries exist).
    init(
        items: [Item],
        decided: RecordWrites,
        senders: AppSenders,
        commits: CommitQueue,
        journal: JournalSettings,
        clock: RelayClock,
        logger: Logger,
        resumed: Bool = false
    ) {
        self.items = items
        self.decided = decided
        self.senders = senders
        self.commits = commits
        self.journal = journal
        self.clock = clock
        self.logger = logger
        var state = State()
        state.journaled = resumed
        self.state = Mutex(state)
    }

    /// The receipt ids of its notifications whose outcome is not known yet; `journaledOnly`: only if they may have
    /// journal entries that this instance still works on (the leases it renews; not after shutdown released them).
    func receiptIDsInFlight(journaledOnly: Bool) -> [String] {
        state.withLock { state in
            if state.done || (journaledOnly && (!state.journaled || state.abandoned)) { return [] }
            return items.filter { state.reports[$0.index] == nil }.map(\.record.receipt.id)
        }
    }

    /// The writes of a request answered before the job concluded: every receipt as ``provisionalReceipts(at:)``
    /// gives it and a journal entry for each notification without an outcome, unless the job is already writing its
    /// outcomes (every pending receipt stored goes with its journal entry).
    ///
    /// - Throws: When an entry cannot be sealed (the system's random source failed); nothing is then journaled.
    func provisionalWrites(at date: Date? = nil) throws -> StoreBatch {
        let date = date ?? clock.date
        let (reports, unfinished, attempted) = state.withLock { state in
            let unfinished = items.filter { state.reports[$0.index] == nil }
            let journals = !state.concluding && !unfinished.isEmpty
            if journals { state.journaled = true }
            return (state.reports, journals ? unfinished : [], state.started)
        }
        var batch = StoreBatch(provisionalReceipts: provisionalReceipts(reports, at: date))
        batch.journal = try unfinished.map { try journal.entry(for: $0, attempted: attempted, at: date) }
        return batch
    }

    /// Every receipt of the request as known now, to be stored as ``StoreBatch/provisionalReceipts``: the refused
    /// ones, the outcomes known so far, pending for the rest.
    func provisionalReceipts(at date: Date? = nil) -> [Receipt] {
        provisionalReceipts(state.withLock { $0.reports }, at: date ?? clock.date)
    }

    private func provisionalReceipts(_ reports: [Int: DeliveryReport], at date: Date) -> [Receipt] {
        decided.batch.receipts
            + items.map { item in
                guard let report = reports[item.index] else { return item.record.receipt }
                return item.record.receipt(after: Conclusion(report), at: date)
            }
    }

    /// For shutdown, once the drain has lasted long enough: journals every notification without an outcome (with its
    /// receipt as it stands) and stops recording reports, which the cancellation that follows would make up. The
    /// entries' leases end at once, so another instance on the same database may take them over; otherwise the next
    /// start resumes them. Does nothing when the job is already writing its outcomes.
    func journalUnfinished() async {
        let date = clock.date
        let taken = state.withLock { state -> (reports: [Int: DeliveryReport], items: [Item], attempted: Bool)? in
            guard !state.concluding, !state.done else { return nil }
            state.abandoned = true
            state.journaled = true
            return (state.reports, items.filter { state.reports[$0.index] == nil }, state.started)
        }
        guard let taken, !taken.items.isEmpty else { return }
        do {
            var batch = StoreBatch(provisionalReceipts: provisionalReceipts(taken.reports, at: date))
            batch.journal = try taken.items.map {
                try journal.entry(for: $0, attempted: taken.attempted, at: date, released: true)
            }
            try await commits.submit(batch, ifFailed: .hold)
        } catch {
            logger.error(
                "Notifications still in flight at shutdown could not be journaled",
                metadata: ["error": "\(error)", "notifications": "\(taken.items.count)"]
            )
        }
    }

    /// Sends everything, records outcomes, writes them to the store, then wakes the waiters.
    func run() async {
        state.withLock { $0.started = true }
        // Only resumed notifications can have an outcome decided without sending: otherwise the items go as they are.
        var toSend = items
        if items.contains(where: { $0.decidedOutcome != nil }) {
            toSend = []
            for position in items.indices {
                if let outcome = items[position].decidedOutcome {
                    record(items, position, DeliveryReport(outcome: outcome, attempts: 0))
                } else {
                    toSend.append(items[position])
                }
            }
        }
        let sends = self.sends(toSend)
        if sends.count == 1 {
            // Most requests carry one notification: sent from this task, without a task group and a child task.
            await sends[0]()
        } else if !sends.isEmpty {
            await withTaskGroup(of: Void.self) { group in
                for send in sends { group.addTask(operation: send) }
            }
        }
        let now = clock.date
        let (reports, journaled, abandoned) = state.withLock { state in
            state.concluding = true
            return (state.reports, state.journaled, state.abandoned)
        }
        var writes = decided
        // By position, reading each item in place: `for item in items` copied every item (its push, its record).
        for position in items.indices {
            // Every sender reports on every push it is given; a missing report would leave the receipt pending.
            if let report = reports[items[position].index] {
                items[position].record.record(Conclusion(report), report: report, at: now, into: &writes)
                if journaled { writes.batch.journalDeletes.append(items[position].record.receipt.id) }
            } else if !abandoned {
                writes.batch.receipts.append(items[position].record.receipt)
            }
        }
        do {
            // Held in memory and committed again while the store fails: the notifications went out, and their
            // outcomes must reach the store.
            try await commits.submit(writes.batch, audit: writes.audit, ifFailed: .hold)
        } catch {
            // Shutdown has closed the queue, or another relay concluded them first.
            logger.error(
                "Receipts and audit records could not be stored",
                metadata: ["error": "\(error)", "receipts": "\(writes.batch.receipts.count)"]
            )
        }
        let waiters = state.withLock { state in
            state.done = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// One send per push for a sender that sends each push on its own, one per provider otherwise.
    ///
    /// Synchronous, and out of line, so that its temporaries (the senders cast to their concrete types) stay on the
    /// thread's stack instead of growing the async frame that ``run()`` holds while its notifications are in flight.
    @inline(never)
    private func sends(_ toSend: [Item]) -> [@Sendable () async -> Void] {
        var sends: [@Sendable () async -> Void] = []
        for (route, items) in Self.routes(toSend) {
            guard let sender = senders.sender(app: route.app, provider: route.provider) else {
                // Admitted when its app had these credentials and resumed after a configuration without them:
                // concluded as a new notification would be, rather than left pending.
                let report = DeliveryReport(outcome: .refused(.providerNotConfigured, retryAfter: nil), attempts: 0)
                for position in items.indices { record(items, position, report) }
                continue
            }
            // APNs and FCM by their concrete types, so that the send calls its sender's specialised entry point
            // directly, not through the generic conformance's witness. Their pushes go together, each reported as
            // soon as its outcome is known (``ProviderSender/send(each:report:)``).
            let pushes = items.map(\.push)
            let report: @Sendable (Int, DeliveryReport) -> Void = { position, report in
                self.record(items, position, report)
            }
            if let apns = sender as? APNsSender {
                sends.append { await apns.send(each: pushes, report: report) }
            } else if let fcm = sender as? FCMSender {
                sends.append { await fcm.send(each: pushes, report: report) }
            } else if let single = sender as? any SinglePushSender {
                sends.append { await single.send(each: pushes, report: report) }
            } else {
                sends.append {
                    let reports = await sender.send(items.map(\.push))
                    for (position, report) in reports.enumerated() { self.record(items, position, report) }
                }
            }
        }
        return sends
    }

    /// Which sender takes a notification: its app's, for its provider.
    private struct SenderRoute: Hashable {
        var app: String
        var provider: Provider

        init(_ item: Item) {
            app = item.push.app
            provider = item.push.provider
        }
    }

    /// The items by route. Almost every request has one route: then the items go as they are, without grouping
    /// (a generic grouping copied every item through its value witnesses; `relay-bench relay`, batched phase).
    private static func routes(_ items: [Item]) -> [(route: SenderRoute, items: [Item])] {
        guard let first = items.first.map(SenderRoute.init) else { return [] }
        if items.allSatisfy({ $0.push.provider == first.provider && $0.push.app == first.app }) {
            return [(first, items)]
        }
        return Dictionary(grouping: items, by: SenderRoute.init).map { ($0.key, $0.value) }
    }

    /// Records the report of `items[position]`, reading the item in place rather than copying it out.
    private func record(_ items: [Item], _ position: Int, _ report: DeliveryReport) {
        let recorded = state.withLock { state in
            // After shutdown journaled it, a report is the cancellation's, not the provider's.
            guard !state.abandoned else { return false }
            state.reports[items[position].index] = report
            return true
        }
        guard recorded else { return }
        items[position].record.count(Conclusion(report))
        PushMetricHandles.upstreamDuration(items[position].push.provider).record(report.latency)
    }

    /// The outcomes known by `deadline`, or all of them once the job has ended, whichever comes first; earlier if the
    /// waiting task is cancelled.
    func progress(until deadline: ContinuousClock.Instant, timer: DeadlineTimer) async -> Progress {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let token = timer.schedule(at: deadline) { self.stopWaiting(id) }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    // The timer reads the clock before it calls `stopWaiting`: if it has fired, `now` is past the
                    // deadline here too, so a waiter is never left behind a timer that has already run.
                    if state.done || Task.isCancelled || clock.now >= deadline { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            stopWaiting(id)
        }
        timer.cancel(token)
        return state.withLock { Progress(reports: $0.reports, finished: $0.done) }
    }

    private func stopWaiting(_ id: UInt64) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}

/// A sender that sends each push on its own (APNs, FCM): one request and one outcome per push.
package protocol SinglePushSender: PushSender {
    func send(_ push: ResolvedPush) async -> DeliveryReport
    /// Sends every push on its own and reports each outcome, with the push's position, when that push's send ends.
    func send(each pushes: [ResolvedPush], report: @escaping @Sendable (Int, DeliveryReport) -> Void) async
}

extension SinglePushSender {
    /// Each push through ``send(_:)-(ResolvedPush)``, concurrently.
    package func send(each pushes: [ResolvedPush], report: @escaping @Sendable (Int, DeliveryReport) -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for (position, push) in pushes.enumerated() {
                group.addTask { report(position, await self.send(push)) }
            }
        }
    }
}

extension ProviderSender: SinglePushSender where Upstream: SingleMessageUpstream {}
