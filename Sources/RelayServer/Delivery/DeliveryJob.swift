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
final class DeliveryJob: Sendable {
    struct Item: Sendable {
        var index: Int
        var push: ResolvedPush
        var receiptID: String
        var fingerprint: String
    }

    /// Whose notifications these are, for metrics, usage and the audit log.
    struct Origin: Sendable {
        var tenant: Tenant
        var keyID: String
        var request: RequestTrail.Fields
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
    private let state = Mutex(State())
    private let senders: [Provider: any PushSender]
    private let commits: CommitQueue
    private let logger: Logger

    init(items: [Item], origin: Origin, senders: [Provider: any PushSender], commits: CommitQueue, logger: Logger) {
        self.items = items
        self.origin = origin
        self.senders = senders
        self.commits = commits
        self.logger = logger
    }

    /// Sends everything, records outcomes, writes them to the store, then wakes the waiters.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            let byProvider = Dictionary(grouping: items, by: \.push.provider)
            for (provider, items) in byProvider {
                guard let sender = senders[provider] else { continue }
                if let single = sender as? any SinglePushSender {
                    for item in items {
                        group.addTask { self.record(item, await single.send(item.push)) }
                    }
                } else {
                    group.addTask {
                        let reports = await sender.send(items.map(\.push))
                        for (item, report) in zip(items, reports) { self.record(item, report) }
                    }
                }
            }
        }
        let now = Date()
        let reports = state.withLock { $0.reports }
        var batch = StoreBatch()
        var audit: [AuditEntry] = []
        for item in items {
            guard let report = reports[item.index] else { continue }
            if report.receiptPending, case .delivered(let ticket) = report.outcome {
                batch.receiptUpdates.append(
                    ReceiptUpdate(id: item.receiptID, status: .pending, providerMessageID: ticket, expoTicketID: ticket, updatedAt: now)
                )
            } else {
                batch.receiptUpdates.append(ReceiptUpdate(outcome: report.outcome, id: item.receiptID, at: now))
            }
            batch.count(
                UsageCounts(outcomeCode: report.outcome.errorCode),
                for: UsageKey(tenantID: origin.tenant.id, date: now, provider: item.push.provider)
            )
            audit.append(
                AuditEntry(
                    timeMillis: AuditTime.millis(now), event: .push, tenantID: origin.tenant.id, keyID: origin.keyID,
                    requestID: origin.request.requestID, client: origin.request.client,
                    provider: item.push.provider.rawValue, tokenFingerprint: item.fingerprint,
                    critical: item.push.isCritical, outcome: report.outcome.errorCode ?? "ok",
                    upstreamStatus: report.upstreamStatus, upstreamReason: report.upstreamReason,
                    attempts: report.attempts, latencyMillis: Int(report.latency / .milliseconds(1))
                )
            )
        }
        let updates = batch.receiptUpdates
        do {
            try await commits.submit(batch, audit: audit)
        } catch {
            logger.error("Receipts could not be stored", metadata: ["error": "\(error)", "receipts": "\(updates.count)"])
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
        Counter(
            label: "relay_pushes_total",
            dimensions: [
                ("tenant", tenantName), ("provider", item.push.provider.rawValue),
                ("outcome", report.outcome.shortDescription),
            ]
        ).increment()
        Timer(label: "relay_upstream_duration_seconds", dimensions: [("provider", item.push.provider.rawValue)])
            .recordNanoseconds(Int64(report.latency.components.seconds) * 1_000_000_000 + report.latency.components.attoseconds / 1_000_000_000)
    }

    /// The outcomes known by `deadline` (or all, if the job ends first), by item index.
    func reports(until deadline: ContinuousClock.Instant) async -> [Int: DeliveryReport] {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitUntilDone() }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
        return state.withLock { $0.reports }
    }

    private func waitUntilDone() async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.done || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// A sender that sends each push on its own (APNs, FCM), so that every outcome is known as soon as it arrives.
package protocol SinglePushSender: PushSender {
    func send(_ push: ResolvedPush) async -> DeliveryReport
}

extension APNsSender: SinglePushSender {}
extension FCMSender: SinglePushSender {}
