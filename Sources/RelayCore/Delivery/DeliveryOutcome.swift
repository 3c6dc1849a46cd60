package import Foundation

/// The final result of one notification: what the caller is told, the receipt keeps, the usage counts, the metrics
/// label and the audit log records. Every one of those derives from this one value (``code``, ``message``,
/// ``removeToken``, ``retryAfter``, ``shortDescription``), from the sender's report or the relay's own refusal to the
/// store and each API's rendering.
package enum DeliveryOutcome: Sendable, Equatable {
    /// The provider accepted the message. The id is APNs's `apns-id`, FCM's message name or Expo's ticket id.
    case delivered(providerMessageID: String?)
    /// The token is dead or malformed: the caller should remove it.
    case tokenInvalid(TokenProblem, reason: String, since: Date?)
    /// The message itself was refused; sending it again will not help.
    case rejected(RejectionCode, reason: String)
    /// The operator's credentials or set-up are wrong; never the token's fault.
    case configurationError(reason: String)
    /// Transient failures outlasted the retry budget; the caller may try again after `retryAfter`.
    case unavailable(reason: String, retryAfter: Duration?)
    /// The relay refused the notification itself; nothing was sent. `retryAfter` when waiting helps (a device over
    /// its per-minute allowance).
    case refused(RelayRefusal, retryAfter: Duration?)

    /// Spelt as ``OutcomeCode`` spells its codes (``DeliveryOutcome/code``): the one place codes are spelt.
    package enum TokenProblem: Sendable, Equatable {
        /// The app was uninstalled or the token expired (APNs 410, FCM UNREGISTERED, Expo DeviceNotRegistered).
        case deviceNotRegistered
        /// The token is not a token of this provider (APNs BadDeviceToken, FCM INVALID_ARGUMENT on the token).
        case invalidToken
    }

    /// Spelt as ``OutcomeCode`` spells its codes (``DeliveryOutcome/code``).
    package enum RejectionCode: Sendable, Equatable {
        case messageTooBig
        case invalidArgument
        case messageRateExceeded
    }

    /// Whether the caller should stop using the token.
    package var removeToken: Bool {
        if case .tokenInvalid = self { true } else { false }
    }

    /// A bounded label for metrics and logs: never contains values.
    package var shortDescription: String {
        switch self {
        case .delivered: "delivered"
        case .tokenInvalid: "token_invalid"
        case .rejected: "rejected"
        case .configurationError: "configuration_error"
        case .unavailable: "unavailable"
        case .refused: "refused"
        }
    }
}

/// What a sender does with one upstream answer: the decision of the classifiers.
package enum UpstreamVerdict: Sendable, Equatable {
    /// Done: report this outcome.
    case final(DeliveryOutcome)
    /// A transient failure: try again after back-off (at least `notBefore` when the upstream said so), on a fresh
    /// connection when `freshConnection`; report `otherwise` when no attempt is left.
    case retry(notBefore: Duration?, freshConnection: Bool, otherwise: DeliveryOutcome)
    /// The credential expired: make a new one and try again, once; report `otherwise` if that fails too.
    case refreshCredentialAndRetry(otherwise: DeliveryOutcome)
}
