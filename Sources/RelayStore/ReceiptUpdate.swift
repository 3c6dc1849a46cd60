package import Foundation
package import RelayCore

/// A change to a receipt once its outcome is known.
package struct ReceiptUpdate: Sendable, Equatable {
    package var id: String
    package var status: ReceiptStatus
    package var errorCode: String?
    package var message: String?
    package var removeToken: Bool
    package var providerMessageID: String?
    package var expoTicketID: String?
    package var updatedAt: Date

    package init(
        id: String,
        status: ReceiptStatus,
        errorCode: String? = nil,
        message: String? = nil,
        removeToken: Bool = false,
        providerMessageID: String? = nil,
        expoTicketID: String? = nil,
        updatedAt: Date
    ) {
        self.id = id
        self.status = status
        self.errorCode = errorCode
        self.message = message
        self.removeToken = removeToken
        self.providerMessageID = providerMessageID
        self.expoTicketID = expoTicketID
        self.updatedAt = updatedAt
    }
}

extension Receipt {
    /// Applies a known outcome.
    package mutating func apply(_ update: ReceiptUpdate) {
        status = update.status
        errorCode = update.errorCode
        message = update.message
        removeToken = update.removeToken
        if let id = update.providerMessageID { providerMessageID = id }
        expoTicketID = update.expoTicketID
        updatedAt = update.updatedAt
    }
}

extension ReceiptUpdate {
    /// The update that records a final outcome.
    package init(outcome: DeliveryOutcome, id: String, at date: Date) {
        switch outcome {
        case .delivered(let messageID):
            self.init(id: id, status: .ok, providerMessageID: messageID, updatedAt: date)
        default:
            self.init(
                id: id,
                status: .error,
                errorCode: outcome.errorCode,
                message: outcome.message,
                removeToken: outcome.removeToken,
                updatedAt: date
            )
        }
    }
}
