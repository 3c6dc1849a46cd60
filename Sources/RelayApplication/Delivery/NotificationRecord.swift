package import Foundation
import Metrics
package import RelayCore
package import RelayProviders
package import RelayStore

/// How a notification's record ends, or moves on: the events that write its receipt, usage and audit entry.
package enum Conclusion: Sendable, Equatable {
    /// A final outcome while the request is in hand: the relay's own refusal or a sender's report.
    case final(DeliveryOutcome)
    /// Expo took the notification (its ticket is ok): the receipt stays pending, with the ticket, until Expo's
    /// receipt arrives; the usage counts it as accepted.
    case acceptedByExpo(ticketID: String)
    /// Expo's receipt for the ticket gives the final outcome of a notification it had accepted.
    case expoReceipt(DeliveryOutcome, ticketID: String)

    /// The `outcome` label of `relay_pushes_total`: bounded, never a value.
    package var metricsLabel: String {
        switch self {
        case .final(let outcome), .expoReceipt(let outcome, _): outcome.shortDescription
        case .acceptedByExpo: "accepted"
        }
    }

    /// The sender's report, read as a conclusion: an Expo ticket that is ok waits for its receipt.
    package init(_ report: DeliveryReport) {
        if report.receiptPending, case .delivered(let ticketID?) = report.outcome {
            self = .acceptedByExpo(ticketID: ticketID)
        } else {
            self = .final(report.outcome)
        }
    }
}

/// Store writes and audit entries that go to ``CommitQueue`` together.
package struct RecordWrites: Sendable {
    package var batch = StoreBatch()
    package var audit: [AuditEntry] = []

    package init(batch: StoreBatch = StoreBatch(), audit: [AuditEntry] = []) {
        self.batch = batch
        self.audit = audit
    }
}

/// One notification as the relay records it. Its receipt, its usage count, its audit entry and its metric all derive
/// from this one value and a ``Conclusion``, in ``record(_:report:at:into:)``, so that the four never disagree;
/// each API then renders the receipt's typed code its own way.
///
/// Built once, at admission (``AdmissionPlan``), with the receipt pending; concluded by the plan (a refusal), the
/// delivery job (a sender's report) or the Expo receipt poller (``AuditedExpoReceipts``).
package struct NotificationRecord: Sendable, Equatable {
    /// The receipt as admitted: pending. Never the token, only its fingerprint; never content.
    package var receipt: Receipt
    /// The tenant's name, the metric's label (a bounded dimension: operators create tenants).
    package var tenantName: String
    package var requestID: String?
    package var client: String?
    /// What its audit entry says besides the outcome: how a notification resumed from the delivery journal after a
    /// restart was resumed (``Resumption``); `nil` for one concluded by the relay that admitted it.
    package var auditDetail: String?

    package init(
        receipt: Receipt, tenantName: String, requestID: String? = nil, client: String? = nil,
        auditDetail: String? = nil
    ) {
        self.receipt = receipt
        self.tenantName = tenantName
        self.requestID = requestID
        self.client = client
        self.auditDetail = auditDetail
    }

    /// The receipt after `conclusion`. An Expo receipt's outcome is written as a ``StoreBatch/receiptCloses`` update
    /// instead, which applies only while the receipt is pending.
    package func receipt(after conclusion: Conclusion, at date: Date) -> Receipt {
        var concluded = receipt
        concluded.apply(update(conclusion, at: date))
        return concluded
    }

    /// The change `conclusion` makes to the receipt.
    package func update(_ conclusion: Conclusion, at date: Date) -> ReceiptUpdate {
        switch conclusion {
        case .final(let outcome), .expoReceipt(let outcome, _):
            ReceiptUpdate(outcome: outcome, id: receipt.id, at: date)
        case .acceptedByExpo(let ticketID):
            ReceiptUpdate(
                id: receipt.id, status: .pending, providerMessageID: ticketID, expoTicketID: ticketID, updatedAt: date
            )
        }
    }

    /// Adds the receipt, the usage count and the audit entry of `conclusion` to `writes`. Pure: the metric is
    /// ``count(_:)``'s.
    ///
    /// - Parameter report: the sender's report, for the audit entry's upstream status, reason, attempts and
    ///   latency; `nil` when nothing was sent (a refusal) or for an Expo receipt.
    package func record(
        _ conclusion: Conclusion, report: DeliveryReport? = nil, at date: Date, into writes: inout RecordWrites
    ) {
        let outcome: DeliveryOutcome
        var detail = auditDetail
        switch conclusion {
        case .final(let final):
            outcome = final
            writes.batch.receipts.append(receipt(after: conclusion, at: date))
            writes.batch.count(firstCount(UsageCounts(final)), for: usageKey(on: date))
        case .acceptedByExpo:
            outcome = .delivered(providerMessageID: nil)
            writes.batch.receipts.append(receipt(after: conclusion, at: date))
            // Counted on the day of the receipt's creation, where its Expo receipt will move it from.
            writes.batch.count(firstCount(UsageCounts(column: .accepted)), for: usageKey(on: receipt.createdAt))
        case .expoReceipt(let final, let ticketID):
            outcome = final
            writes.batch.receiptCloses.append(update(conclusion, at: date))
            writes.batch.count(.acceptedEnded(final), for: usageKey(on: receipt.createdAt))
            detail = "Expo receipt for ticket \(ticketID) (receipt \(receipt.id))"
        }
        let isExpoReceipt = if case .expoReceipt = conclusion { true } else { false }
        writes.audit.append(
            AuditEntry(
                timeMillis: AuditTime.millis(date), event: .push, tenantID: receipt.tenantID, keyID: receipt.keyID,
                requestID: requestID, client: client, provider: receipt.provider.rawValue,
                tokenFingerprint: receipt.tokenFingerprint, critical: receipt.isCritical,
                outcome: outcome.code?.rawValue ?? "ok",
                upstreamStatus: report?.upstreamStatus,
                upstreamReason: report?.upstreamReason ?? outcome.upstreamReason,
                attempts: report?.attempts ?? (isExpoReceipt ? nil : 0),
                latencyMillis: report.map { Int($0.latency / .milliseconds(1)) } ?? (isExpoReceipt ? nil : 0),
                detail: detail,
                app: receipt.app == AppName.default ? nil : receipt.app
            )
        )
    }

    /// Counts `conclusion` in `relay_pushes_total`. An Expo notification is counted twice: as accepted when Expo
    /// takes it, and with its final outcome when its receipt arrives (a counter cannot move a push between outcomes).
    package func count(_ conclusion: Conclusion) {
        // Bounded: apps come only from the configuration.
        PushMetricHandles.pushes(
            tenant: receipt.tenantID, provider: receipt.provider, outcome: conclusion.metricsLabel, app: receipt.app
        ).increment()
    }

    /// `counts` as the notification's first count in usage, which also counts it as critical if it is: an Expo
    /// receipt only moves it between columns later.
    private func firstCount(_ counts: UsageCounts) -> UsageCounts {
        var counts = counts
        if receipt.isCritical { counts.critical = 1 }
        return counts
    }

    private func usageKey(on date: Date) -> UsageKey {
        UsageKey(tenantID: receipt.tenantID, date: date, provider: receipt.provider, app: receipt.app)
    }
}
