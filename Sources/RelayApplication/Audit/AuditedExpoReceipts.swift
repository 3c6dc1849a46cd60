package import Foundation
import Metrics
package import RelayCore
import RelayStore

/// The Expo receipt poller's store, seen through the audit log and the metrics: when Expo's receipt gives a
/// notification its final outcome, the audit log gets a `push` record for it (the earlier record only says Expo
/// accepted the ticket) and `relay_pushes_total` counts it with that outcome (it was counted as `accepted` when Expo
/// took it). The store itself moves the tenant's usage from "accepted" to the receipt's column, with the receipt.
package struct AuditedExpoReceipts: ExpoReceiptStore {
    let relay: Relay

    package init(relay: Relay) {
        self.relay = relay
    }

    package func pendingExpoTickets(sentBefore: Date, limit: Int) async throws -> [String] {
        try await relay.store.pendingExpoTickets(sentBefore: sentBefore, limit: limit)
    }

    @discardableResult
    package func recordExpoReceipt(ticketID: String, outcome: DeliveryOutcome) async throws -> Bool {
        let receipt = try await relay.store.pendingReceipt(expoTicketID: ticketID)
        // The metric's label; read before the receipt is closed, so that a store failing here leaves the receipt to
        // the next poll. A tenant that no longer exists is labelled by its id.
        var tenantName: String?
        if let receipt { tenantName = try await relay.store.tenant(id: receipt.tenantID)?.name ?? receipt.tenantID }
        // Only the relay whose write closed the receipt counts and audits it: another one on the same database may
        // have got there first.
        let closed = try await relay.store.recordExpoReceipt(ticketID: ticketID, outcome: outcome)
        guard closed, let receipt, let tenantName else { return closed }
        Counter(
            label: "relay_pushes_total",
            dimensions: [
                ("tenant", tenantName), ("provider", Provider.expo.rawValue), ("outcome", outcome.shortDescription),
            ]
        ).increment()
        let now = relay.clock.date
        let entry = AuditEntry(
            timeMillis: AuditTime.millis(now), event: .push, tenantID: receipt.tenantID, keyID: receipt.keyID, provider: Provider.expo.rawValue,
            tokenFingerprint: receipt.tokenFingerprint, critical: receipt.isCritical,
            outcome: outcome.errorCode ?? "ok", upstreamReason: outcome.errorCode,
            detail: "Expo receipt for ticket \(ticketID) (receipt \(receipt.id))"
        )
        try await relay.commits.submit(StoreBatch(), audit: [entry])
        return true
    }
}
