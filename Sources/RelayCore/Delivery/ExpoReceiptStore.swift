package import Foundation

/// Where the poller finds Expo tickets still waiting for their receipt, and where it reports final outcomes. The
/// relay implements it over its store and commit queue (`AuditedExpoReceipts`).
package protocol ExpoReceiptStore: Sendable {
    /// Ticket ids whose push was accepted by Expo before `sentBefore` and whose receipt has not arrived, oldest first.
    func pendingExpoTickets(sentBefore: Date, limit: Int) async throws -> [String]
    /// Records the final outcome of the push with this ticket, if its receipt is still pending, and moves the push's
    /// usage count from accepted to the outcome's column, in the same transaction.
    ///
    /// - Returns: Whether a pending receipt took the outcome: `false` for an unknown ticket, or one whose outcome is
    ///   already recorded (by another relay on the same database, too), which changes nothing.
    @discardableResult
    func recordExpoReceipt(ticketID: String, outcome: DeliveryOutcome) async throws -> Bool
}
