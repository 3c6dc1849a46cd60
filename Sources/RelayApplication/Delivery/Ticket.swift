package import RelayCore

/// What the caller learns about one notification in the response.
package struct Ticket: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        case ok(providerMessageID: String?)
        case error(code: OutcomeCode, message: String, removeToken: Bool, retryAfter: Int?)
        /// Accepted; the outcome was not known by the deadline and will be in the receipt.
        case pending
        /// Handed to the provider, but neither its outcome nor its journal entry could be stored before the answer
        /// (the store failed): it may still be delivered, and its receipt may not be found. Answered as
        /// `StoreUnavailable`, never as `pending`, which promises a stored journal entry.
        case unrecorded
    }

    /// The receipt id, for `POST /v1/receipts`.
    package var id: String
    package var provider: Provider
    package var state: State

    /// The ticket's error code, when it is an error.
    package var errorCode: OutcomeCode? {
        if case .error(let code, _, _, _) = state { code } else { nil }
    }

    /// The code an unrecorded ticket is answered with, in every API.
    package static let unrecordedCode = "StoreUnavailable"
    /// Its message.
    package static let unrecordedMessage =
        "the store failed: neither this notification's outcome nor its journal entry could be stored before the "
        + "answer; it was handed to the provider and may still be delivered"
}

extension Ticket.State {
    /// The ticket state of a final outcome: the only place a ticket is derived from one.
    package init(_ outcome: DeliveryOutcome) {
        if case .delivered(let messageID) = outcome {
            self = .ok(providerMessageID: messageID)
        } else {
            self = .error(
                code: outcome.code ?? .providerUnavailable,
                message: outcome.message ?? "",
                removeToken: outcome.removeToken,
                retryAfter: outcome.retryAfter.map { Int($0.components.seconds) }
            )
        }
    }
}

extension Ticket.State {
    /// The ticket state of a report read as a conclusion: a notification Expo accepted is `ok` with Expo's ticket id.
    package init(_ conclusion: Conclusion) {
        switch conclusion {
        case .final(let outcome), .expoReceipt(let outcome, _): self.init(outcome)
        case .acceptedByExpo(let ticketID): self = .ok(providerMessageID: ticketID)
        }
    }
}
