package import RelayCore

/// What the caller learns about one notification in the response.
package struct Ticket: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        case ok(providerMessageID: String?)
        case error(code: String, message: String, removeToken: Bool, retryAfter: Int?)
        /// Accepted; the outcome was not known by the deadline and will be in the receipt.
        case pending
    }

    /// The receipt id, for `POST /v1/receipts`.
    package var id: String
    package var provider: Provider
    package var state: State

    /// The ticket's error code, when it is an error.
    package var errorCode: String? {
        if case .error(let code, _, _, _) = state { code } else { nil }
    }
}

/// The relay's own refusals, before anything is sent upstream.
package enum RelayRefusal: String, Sendable {
    case criticalAlertsNotAllowed = "CriticalAlertsNotAllowed"
    case providerNotConfigured = "ProviderNotConfigured"
    case messageRateExceeded = "MessageRateExceeded"
    /// The operator allows this tenant other providers only; the code is ProviderNotConfigured, as for the
    /// relay as a whole, so callers need to handle one code.
    case providerNotAllowed = "ProviderNotAllowed"

    /// The ticket's error code.
    package var code: String { self == .providerNotAllowed ? RelayRefusal.providerNotConfigured.rawValue : rawValue }

    package var message: String {
        switch self {
        case .providerNotAllowed:
            "This tenant may not push through this provider; nothing was sent. Ask the relay's operator."
        case .criticalAlertsNotAllowed:
            "This tenant may not send critical alerts; nothing was sent. Ask the relay's operator to allow them."
        case .providerNotConfigured: "The relay has no credentials for this provider; nothing was sent."
        case .messageRateExceeded: "Too many notifications to this device token in the last minute; nothing was sent."
        }
    }
}

extension Ticket.State {
    /// The ticket state of a final delivery outcome.
    init(_ outcome: DeliveryOutcome) {
        switch outcome {
        case .delivered(let messageID):
            self = .ok(providerMessageID: messageID)
        case .unavailable(_, let retryAfter):
            let seconds = retryAfter.map { Int($0.components.seconds) }
            self = .error(
                code: outcome.errorCode ?? "ProviderUnavailable",
                message: outcome.message ?? "",
                removeToken: false,
                retryAfter: seconds
            )
        default:
            self = .error(
                code: outcome.errorCode ?? "ProviderError",
                message: outcome.message ?? "",
                removeToken: outcome.removeToken,
                retryAfter: nil
            )
        }
    }
}
