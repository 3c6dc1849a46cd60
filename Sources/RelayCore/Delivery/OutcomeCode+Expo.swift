extension OutcomeCode {
    /// Expo's code (PROTOCOLS.md §3.2) for a ticket or receipt that ended with this code and `message`, for the
    /// answers of the Expo-compatible and OneUptime APIs: a stock Expo SDK raises for each the exception it would raise
    /// against Expo itself (the Python SDK knows `DeviceNotRegistered`, `MessageTooBig`, `MessageRateExceeded` and,
    /// in receipts, `InvalidCredentials`). The native API keeps the relay's own codes.
    package func expoCode(message: String?) -> String {
        switch self {
        case .deviceNotRegistered, .invalidToken:
            // A token that is not valid for the app is as dead to Expo's callers as an unregistered one.
            "DeviceNotRegistered"
        case .messageTooBig, .messageRateExceeded:
            rawValue
        case .tenantRateLimited:
            // Expo's word for being sent too much.
            "MessageRateExceeded"
        case .criticalReserveExhausted:
            // The relay's own: a OneUptime install records it with the page, where "DeveloperError" would mislead.
            rawValue
        case .providerConfigurationError:
            message.map(Self.namesSenderMismatch) == true ? "MismatchSenderId" : "InvalidCredentials"
        case .providerNotConfigured:
            // What Expo says of a project without credentials for the token's platform.
            "InvalidCredentials"
        case .providerUnavailable:
            "ProviderError"
        case .invalidArgument, .criticalAlertsNotAllowed, .appNotAllowed, .unrecognized:
            // The request itself is at fault.
            "DeveloperError"
        }
    }

    /// The upstream reasons that mean the token belongs to another app (FCM sender, APNs topic, Expo project) rather
    /// than that the credentials are wrong.
    static let senderMismatchReasons = [
        "SENDER_ID_MISMATCH", "MismatchSenderId", "DeviceTokenNotForTopic", "BadTopic", "TopicDisallowed",
    ]

    /// Whether a configuration error's message names a sender mismatch. ``DeliveryOutcome/message`` puts the upstream
    /// reason in parentheses, and a stored receipt keeps that message and nothing finer, so a receipt read back and a
    /// fresh ticket are translated alike, from the message.
    static func namesSenderMismatch(_ message: String) -> Bool {
        senderMismatchReasons.contains { message.contains("(\($0)") }
    }
}
