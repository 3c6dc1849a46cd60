/// The error codes of Expo's push API (PROTOCOLS.md §3.2), for the answers of the Expo-compatible and OneUptime
/// APIs: a stock Expo SDK raises for each the exception it would raise against Expo itself (the Python SDK knows
/// `DeviceNotRegistered`, `MessageTooBig`, `MessageRateExceeded` and, in receipts, `InvalidCredentials`).
///
/// The native API keeps the relay's own codes; this is their translation.
package enum ExpoErrorCode {
    /// Expo's code for a ticket or receipt that ended with the relay's `code` and `message`.
    package static func translating(code: String, message: String?) -> String {
        switch code {
        case DeliveryOutcome.TokenProblem.deviceNotRegistered.rawValue, DeliveryOutcome.TokenProblem.invalidToken.rawValue:
            // A token that is not valid for the app is as dead to Expo's callers as an unregistered one.
            return "DeviceNotRegistered"
        case DeliveryOutcome.RejectionCode.messageTooBig.rawValue, DeliveryOutcome.RejectionCode.messageRateExceeded.rawValue:
            return code
        case "ProviderConfigurationError":
            return message.map(isSenderMismatch) == true ? "MismatchSenderId" : "InvalidCredentials"
        case "ProviderNotConfigured":
            // What Expo says of a project without credentials for the token's platform.
            return "InvalidCredentials"
        case "ProviderUnavailable":
            return "ProviderError"
        default:
            // InvalidArgument, CriticalAlertsNotAllowed: the request itself is at fault.
            return "DeveloperError"
        }
    }

    /// The upstream reasons that mean the token belongs to another app (FCM sender, APNs topic, Expo project) rather
    /// than that the credentials are wrong.
    static let senderMismatchReasons = ["SENDER_ID_MISMATCH", "MismatchSenderId", "DeviceTokenNotForTopic", "BadTopic", "TopicDisallowed"]

    /// Whether a configuration error's message names a sender mismatch. ``DeliveryOutcome/message`` puts the upstream
    /// reason in parentheses; a stored receipt keeps that message and nothing finer, so the reason is read back here.
    static func isSenderMismatch(_ message: String) -> Bool {
        senderMismatchReasons.contains { message.contains("(\($0)") }
    }
}
