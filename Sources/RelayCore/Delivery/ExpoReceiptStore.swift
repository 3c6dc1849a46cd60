package import Foundation

/// Where the poller finds Expo tickets still waiting for their receipt, and where it reports final outcomes. The
/// store implements it.
package protocol ExpoReceiptStore: Sendable {
    /// Ticket ids whose push was accepted by Expo before `sentBefore` and whose receipt has not arrived, oldest first.
    func pendingExpoTickets(sentBefore: Date, limit: Int) async throws -> [String]
    /// The final outcome of the push with this ticket.
    func recordExpoReceipt(ticketID: String, outcome: DeliveryOutcome) async throws
}
