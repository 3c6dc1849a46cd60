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
/// receipts with their outcomes, and those of the request's refused notifications (``Writes``). A request that
/// answers before that (its deadline) stores ``provisionalReceipts()`` first, which never overwrite an outcome.
final class DeliveryJob: Sendable {
    struct Item: Sendable {
        var index: Int
        var push: ResolvedPush
        /// The receipt while the outcome is unknown: status pending.
        var receipt: Receipt
    }

    /// Whose notifications these are, for metrics, usage and the audit log.
    struct Origin: Sendable {
        var tenant: Tenant
        var keyID: String
        var request: RequestTrail.Fields
    }

    /// What the request decided before sending (its refused notifications: receipts, usage, audit records), written
    /// with the outcomes.
    struct Writes: Sendable {
        var batch = StoreBatch()
        var audit: [AuditEntry] = []
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
    }

    let items: [Item]
    let origin: Origin
    /// The tenant's name, a bounded metric dimension (operators create tenants).
    var tenantName: String { origin.tenant.name }
    private let decided: Writes
    private let state = Mutex(State())
    private let senders: [Provider: any PushSender]
    private let commits: CommitQueue
    private let clock: RelayClock
    private let logger: Logger

    init(
        items: [Item],
        decided: Writes,
        origin: Origin,
        senders: [Provider: any PushSender],
        commits: CommitQueue,
        clock: RelayClock,
        logger: Logger
    ) {
        self.items = items
        self.decided = decided
        self.origin = origin
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
                guard let report = reports[item.index] else { return item.receipt }
                var receipt = item.receipt
                receipt.apply(Self.update(item, report, at: date))
                return receipt
            }
    }

    /// How a report changes an item's receipt. An Expo ticket stays pending until Expo's receipt arrives.
    private static func update(_ item: Item, _ report: DeliveryReport, at date: Date) -> ReceiptUpdate {
        if report.awaitsExpoReceipt, case .delivered(let ticket) = report.outcome {
            ReceiptUpdate(id: item.receipt.id, status: .pending, providerMessageID: ticket, expoTicketID: ticket, updatedAt: date)
        } else {
            ReceiptUpdate(outcome: report.outcome, id: item.receipt.id, at: date)
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
        var batch = decided.batch
        var audit = decided.audit
        for item in items {
            var receipt = item.receipt
            // Every sender reports on every push it is given; a missing report would leave the receipt pending.
            if let report = reports[item.index] {
                receipt.apply(Self.update(item, report, at: now))
                if report.awaitsExpoReceipt {
                    // Counted on the day of the receipt's creation, where its Expo receipt will move it from.
                    batch.count(
                        UsageCounts(accepted: 1),
                        for: UsageKey(tenantID: origin.tenant.id, date: item.receipt.createdAt, provider: .expo)
                    )
                } else {
                    batch.count(
                        UsageCounts(outcomeCode: report.outcome.errorCode),
                        for: UsageKey(tenantID: origin.tenant.id, date: now, provider: item.push.provider)
                    )
                }
                audit.append(
                    AuditEntry(
                        timeMillis: AuditTime.millis(now), event: .push, tenantID: origin.tenant.id, keyID: origin.keyID,
                        requestID: origin.request.requestID, client: origin.request.client,
                        provider: item.push.provider.rawValue, tokenFingerprint: item.receipt.tokenFingerprint,
                        critical: item.push.isCritical, outcome: report.outcome.errorCode ?? "ok",
                        upstreamStatus: report.upstreamStatus, upstreamReason: report.upstreamReason,
                        attempts: report.attempts, latencyMillis: Int(report.latency / .milliseconds(1))
                    )
                )
            }
            batch.receipts.append(receipt)
        }
        do {
            try await commits.submit(batch, audit: audit)
        } catch {
            // The notifications went out: their outcomes still reach the caller, but not the store. The relay writes
            // ahead of sending while the store keeps failing (``Relay``), so this is the window of one outage.
            logger.error(
                "Receipts and audit records could not be stored",
                metadata: ["error": "\(error)", "receipts": "\(batch.receipts.count)"]
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
        // A push Expo accepted is counted again, with its final outcome, when its receipt arrives
        // (``AuditedExpoReceipts``): a counter cannot move a push from one outcome to another.
        Counter(
            label: "relay_pushes_total",
            dimensions: [
                ("tenant", tenantName), ("provider", item.push.provider.rawValue),
                ("outcome", report.awaitsExpoReceipt ? "accepted" : report.outcome.shortDescription),
            ]
        ).increment()
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

extension DeliveryReport {
    /// Expo accepted the notification (its ticket is ok, with an id): it counts as accepted, its receipt stays
    /// pending, until the Expo receipt for that ticket gives its final outcome (``AuditedExpoReceipts``).
    var awaitsExpoReceipt: Bool {
        guard receiptPending, case .delivered(_?) = outcome else { return false }
        return true
    }
}
