/// Maps Expo's ticket, receipt and request errors to what to do with them.
package enum ExpoClassifier {
    /// One ticket or receipt: `status` is `"ok"` or `"error"`; `error` is `details.error`.
    package static func classifyTicket(status: String, id: String?, error: String?, message: String?) -> UpstreamVerdict
    {
        if status == "ok" { return .final(.delivered(providerMessageID: id)) }
        let text = error ?? message ?? "error"
        switch error {
        case "DeviceNotRegistered":
            return .final(.tokenInvalid(.deviceNotRegistered, reason: text, since: nil))
        case "MessageTooBig":
            return .final(.rejected(.messageTooBig, reason: text))
        case "MessageRateExceeded":
            return .retry(
                notBefore: nil, freshConnection: false, otherwise: .rejected(.messageRateExceeded, reason: text))
        case "MismatchSenderId", "InvalidCredentials":
            return .final(.configurationError(reason: text))
        case "DeveloperError", "ExpoError", "ProviderError":
            return .retry(
                notBefore: nil, freshConnection: false, otherwise: .unavailable(reason: text, retryAfter: nil))
        default:
            // An unknown code never removes a token.
            return .final(.rejected(.invalidArgument, reason: text))
        }
    }

    /// A whole request that failed (`errors: [{code, message, isTransient}]`).
    package static func classifyRequest(
        status: Int,
        code: String?,
        isTransient: Bool,
        retryAfter: Duration? = nil
    ) -> UpstreamVerdict {
        let text = code ?? "HTTP \(status)"
        let unavailable = DeliveryOutcome.unavailable(reason: text, retryAfter: retryAfter)
        switch code {
        case "TOO_MANY_REQUESTS"?:
            return .retry(notBefore: retryAfter, freshConnection: false, otherwise: unavailable)
        case "UNAUTHORIZED"?:
            return .final(.configurationError(reason: text))
        case "PUSH_TOO_MANY_EXPERIENCE_IDS"?, "PUSH_TOO_MANY_NOTIFICATIONS"?, "PUSH_TOO_MANY_RECEIPTS"?:
            return .final(.rejected(.invalidArgument, reason: text))
        default:
            if isTransient || status >= 500 || status == 429 {
                return .retry(notBefore: retryAfter, freshConnection: false, otherwise: unavailable)
            }
            if status == 401 || status == 403 { return .final(.configurationError(reason: text)) }
            return .final(.rejected(.invalidArgument, reason: text))
        }
    }
}
