package import Foundation
package import RelayCore
import RelayStore

/// The Expo receipt poller's store: when Expo's receipt gives a notification its final outcome, the notification's
/// record concludes (``Conclusion/expoReceipt(_:ticketID:)``) through the commit queue like every other outcome: the
/// receipt closes, the tenant's usage moves from "accepted" to the outcome's column, the audit log gets a `push`
/// record (the earlier one only says Expo accepted the ticket) and `relay_pushes_total` counts it with that outcome
/// (it was counted as `accepted` when Expo took it).
///
/// Each app with Expo has its own poller, which asks Expo with that app's access token for that app's tickets only.
package struct AuditedExpoReceipts: ExpoReceiptStore {
    let relay: Relay
    /// The app whose tickets this poller follows; `nil` for every app.
    let app: String?

    package init(relay: Relay, app: String? = nil) {
        self.relay = relay
        self.app = app
    }

    package func pendingExpoTickets(sentBefore: Date, limit: Int) async throws -> [String] {
        try await relay.store.pendingExpoTickets(sentBefore: sentBefore, limit: limit, app: app)
    }

    @discardableResult
    package func recordExpoReceipt(ticketID: String, outcome: DeliveryOutcome) async throws -> Bool {
        guard let receipt = try await relay.store.pendingReceipt(expoTicketID: ticketID) else { return false }
        // A tenant that no longer exists is labelled by its id.
        let tenantName = try await relay.store.tenant(id: receipt.tenantID)?.name ?? receipt.tenantID
        let record = NotificationRecord(receipt: receipt, tenantName: tenantName)
        let conclusion = Conclusion.expoReceipt(outcome, ticketID: ticketID)
        var writes = RecordWrites()
        record.record(conclusion, at: relay.clock.date, into: &writes)
        do {
            try await relay.commits.submit(writes.batch, audit: writes.audit)
        } catch StoreError.receiptsAlreadyFinal {
            // Another relay on the same database closed it first, and recorded it: only one relay counts and audits it.
            return false
        }
        record.count(conclusion)
        return true
    }
}
