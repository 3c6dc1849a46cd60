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
/// request that answers before that (its deadline) stores ``provisionalReceipts()`` first, which never overwrite an
/// outcome.
final class DeliveryJob: Sendable {
    /// One notification that goes upstream: the plan's own value, so that the job shares the plan's array instead of
    /// copying every push and record while the request waits.
    typealias Item = AdmissionPlan.Delivery

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
    }

    let items: [Item]
    /// What the request decided before sending (its refused notifications: receipts, usage, audit records), written
    /// with the outcomes.
    private let decided: RecordWrites
    private let state = Mutex(State())
    private let senders: [Provider: any PushSender]
    private let commits: CommitQueue
    private let clock: RelayClock
    private let logger: Logger

    init(
        items: [Item],
        decided: RecordWrites,
        senders: [Provider: any PushSender],
        commits: CommitQueue,
        clock: RelayClock,
        logger: Logger
    ) {
        self.items = items
        self.decided = decided
        self.senders = senders
        self.commits = commits
        self.clock = clock
        self.logger = logger
    }

    /// Every receipt of the request as known now, to be stored as ``StoreBatch/provisionalReceipts``: the refused
    /// ones, the outcomes known so far, pending for the rest.
    func provisionalReceipts(at date: Date? = nil) -> [Receipt] {
        let date = date ?? clock.date
        let reports = state.withLock { $0.reports }
        return decided.batch.receipts
            + items.map { item in
                guard let report = reports[item.index] else { return item.record.receipt }
                return item.record.receipt(after: Conclusion(report), at: date)
            }
    }

    /// Sends everything, records outcomes, writes them to the store, then wakes the waiters.
    func run() async {
        var sends: [@Sendable () async -> Void] = []
        for (provider, items) in Dictionary(grouping: items, by: \.push.provider) {
            guard let sender = senders[provider] else { continue }
            if let single = sender as? any SinglePushSender {
                for item in items {
                    sends.append { self.record(item, await single.send(item.push)) }
                }
            } else {
                sends.append {
                    let reports = await sender.send(items.map(\.push))
                    for (item, report) in zip(items, reports) { self.record(item, report) }
                }
            }
        }
        if sends.count == 1 {
            // Most requests carry one notification: sent from this task, without a task group and a child task.
            await sends[0]()
        } else {
            await withTaskGroup(of: Void.self) { group in
                for send in sends { group.addTask(operation: send) }
            }
        }
        let now = clock.date
        let reports = state.withLock { $0.reports }
        var writes = decided
        for item in items {
            // Every sender reports on every push it is given; a missing report would leave the receipt pending.
            if let report = reports[item.index] {
                item.record.record(Conclusion(report), report: report, at: now, into: &writes)
            } else {
                writes.batch.receipts.append(item.record.receipt)
            }
        }
        do {
            try await commits.submit(writes.batch, audit: writes.audit)
        } catch {
            // The notifications went out: their outcomes still reach the caller, but not the store. The relay writes
            // ahead of sending while the store keeps failing (``Relay``), so this is the window of one outage.
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

    private func record(_ item: Item, _ report: DeliveryReport) {
        state.withLock { $0.reports[item.index] = report }
        item.record.count(Conclusion(report))
        Timer(label: "relay_upstream_duration_seconds", dimensions: [("provider", item.push.provider.rawValue)])
            .record(report.latency)
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

/// A sender that sends each push on its own (APNs, FCM), so that every outcome is known as soon as it arrives.
package protocol SinglePushSender: PushSender {
    func send(_ push: ResolvedPush) async -> DeliveryReport
}

extension ProviderSender: SinglePushSender where Upstream: SingleMessageUpstream {}
