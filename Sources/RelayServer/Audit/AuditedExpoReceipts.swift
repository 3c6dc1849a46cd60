package import Foundation
package import RelayCore
import RelayStore

/// The Expo receipt poller's store, seen through the audit log: when Expo's receipt gives a notification its final
/// outcome, the audit log gets a `push` record for it (the earlier record only says Expo accepted the ticket), and the
/// tenant's usage moves from "delivered" to the receipt's column when the receipt says otherwise.
package struct AuditedExpoReceipts: ExpoReceiptStore {
    let relay: Relay

    package init(relay: Relay) {
        self.relay = relay
    }

    package func pendingExpoTickets(sentBefore: Date, limit: Int) async throws -> [String] {
        try await relay.store.pendingExpoTickets(sentBefore: sentBefore, limit: limit)
    }

    package func recordExpoReceipt(ticketID: String, outcome: DeliveryOutcome) async throws {
        let receipt = try await relay.store.pendingReceipt(expoTicketID: ticketID)
        try await relay.store.recordExpoReceipt(ticketID: ticketID, outcome: outcome)
        guard let receipt else { return }
        let now = Date()
        var batch = StoreBatch()
        let final = UsageCounts(outcomeCode: outcome.errorCode)
        if final.delivered == 0 {
            // Counted as delivered when Expo accepted the ticket; the receipt says it was not.
            let moved = final + UsageCounts(delivered: -1)
            batch.count(moved, for: UsageKey(tenantID: receipt.tenantID, date: receipt.createdAt, provider: .expo))
        }
        let entry = AuditEntry(
            timeMillis: AuditTime.millis(now), event: .push, tenantID: receipt.tenantID, keyID: receipt.keyID, provider: Provider.expo.rawValue,
            tokenFingerprint: receipt.tokenFingerprint, critical: receipt.isCritical,
            outcome: outcome.errorCode ?? "ok", upstreamReason: outcome.errorCode,
            detail: "Expo receipt for ticket \(ticketID) (receipt \(receipt.id))"
        )
        try await relay.commits.submit(batch, audit: [entry])
    }
}
