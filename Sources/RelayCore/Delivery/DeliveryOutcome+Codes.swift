extension DeliveryOutcome {
    /// The code a ticket or receipt shows for this outcome; `nil` when delivered.
    package var code: OutcomeCode? {
        switch self {
        case .delivered: nil
        case .tokenInvalid(.deviceNotRegistered, _, _): .deviceNotRegistered
        case .tokenInvalid(.invalidToken, _, _): .invalidToken
        case .rejected(.messageTooBig, _): .messageTooBig
        case .rejected(.invalidArgument, _): .invalidArgument
        case .rejected(.messageRateExceeded, _): .messageRateExceeded
        case .configurationError: .providerConfigurationError
        case .unavailable: .providerUnavailable
        case .refused(let refusal, _): refusal.code
        }
    }

    /// ``code`` as tickets and receipts spell it.
    package var errorCode: String? { code?.rawValue }

    /// When the caller may try again: the provider's or the relay's hint, if any.
    package var retryAfter: Duration? {
        switch self {
        case .unavailable(_, let retryAfter), .refused(_, let retryAfter): retryAfter
        default: nil
        }
    }

    /// The provider's reason (`Unregistered`, `SENDER_ID_MISMATCH`, …); `nil` when delivered or refused by the relay.
    package var upstreamReason: String? {
        switch self {
        case .delivered, .refused: nil
        case .tokenInvalid(_, let reason, _), .rejected(_, let reason), .configurationError(let reason),
            .unavailable(let reason, _):
            reason
        }
    }

    /// A plain explanation for the caller. Names the upstream reason, never the token or the content.
    package var message: String? {
        switch self {
        case .delivered: nil
        case .tokenInvalid(.deviceNotRegistered, let reason, _):
            "The device token is no longer registered (\(reason)); remove it."
        case .tokenInvalid(.invalidToken, let reason, _):
            "The device token is not valid for this app (\(reason)); remove it."
        case .rejected(.messageTooBig, let reason): "The message is too big for the provider (\(reason))."
        case .rejected(.messageRateExceeded, let reason): "Too many messages to this device (\(reason)); slow down."
        case .rejected(.invalidArgument, let reason): "The provider refused the message (\(reason))."
        case .configurationError(let reason):
            "The relay's provider configuration was refused (\(reason)); the token is not at fault."
        case .unavailable(let reason, _): "The provider is unavailable (\(reason)); try again later."
        case .refused(let refusal, _): refusal.message
        }
    }
}
