extension DeliveryOutcome {
    /// The error code a ticket or receipt shows for this outcome; `nil` when delivered.
    package var errorCode: String? {
        switch self {
        case .delivered: nil
        case .tokenInvalid(let problem, _, _): problem.rawValue
        case .rejected(let code, _): code.rawValue
        case .configurationError: "ProviderConfigurationError"
        case .unavailable: "ProviderUnavailable"
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
        }
    }
}
