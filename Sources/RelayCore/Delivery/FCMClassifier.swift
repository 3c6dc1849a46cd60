import Foundation

/// FCM's error codes (the `FcmError` detail's `errorCode`), with a fallback for codes Google adds later.
package enum FCMErrorCode: Hashable, Sendable {
    case unregistered, invalidArgument, senderIdMismatch, quotaExceeded, unavailable, internalError
    case thirdPartyAuthError, unspecifiedError
    case unknown(String)

    package init(_ text: String) {
        switch text {
        case "UNREGISTERED": self = .unregistered
        case "INVALID_ARGUMENT": self = .invalidArgument
        case "SENDER_ID_MISMATCH": self = .senderIdMismatch
        case "QUOTA_EXCEEDED": self = .quotaExceeded
        case "UNAVAILABLE": self = .unavailable
        case "INTERNAL": self = .internalError
        case "THIRD_PARTY_AUTH_ERROR": self = .thirdPartyAuthError
        case "UNSPECIFIED_ERROR": self = .unspecifiedError
        default: self = .unknown(text)
        }
    }
}

/// Maps one FCM answer to what to do with it.
package enum FCMClassifier {
    /// Firebase: on project quota, back off for at least a minute.
    package static let quotaBackOff: Duration = .seconds(60)

    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - errorCode: the `FcmError` detail's `errorCode`, when present.
    ///   - rpcStatus: the `google.rpc.Status` `status` (such as `UNAUTHENTICATED`), when present.
    ///   - message: the error's message.
    ///   - messageName: the success body's `name`.
    ///   - retryAfter: the `retry-after` header, when given.
    package static func classify(
        status: Int,
        errorCode: String?,
        rpcStatus: String? = nil,
        message: String? = nil,
        messageName: String? = nil,
        retryAfter: Duration? = nil
    ) -> UpstreamVerdict {
        if status == 200 { return .final(.delivered(providerMessageID: messageName)) }
        let text = errorCode ?? rpcStatus ?? "HTTP \(status)"
        switch errorCode.map(FCMErrorCode.init) {
        case .unregistered?:
            return .final(.tokenInvalid(.deviceNotRegistered, reason: text, since: nil))
        case .invalidArgument?:
            // Firebase answers a malformed token with INVALID_ARGUMENT and a message naming the registration token.
            let lower = message?.lowercased() ?? ""
            if lower.contains("registration token") {
                return .final(.tokenInvalid(.invalidToken, reason: text, since: nil))
            }
            if lower.contains("too big") || lower.contains("too large") || lower.contains("payload size") {
                return .final(.rejected(.messageTooBig, reason: text))
            }
            return .final(.rejected(.invalidArgument, reason: text))
        case .senderIdMismatch?, .thirdPartyAuthError?:
            return .final(.configurationError(reason: text))
        case .quotaExceeded?:
            let wait = max(retryAfter ?? .zero, quotaBackOff)
            return .retry(
                notBefore: wait, freshConnection: false, otherwise: .unavailable(reason: text, retryAfter: wait))
        case .unavailable?, .internalError?, .unspecifiedError?:
            return .retry(
                notBefore: retryAfter, freshConnection: false,
                otherwise: .unavailable(reason: text, retryAfter: retryAfter))
        case .unknown?, nil:
            if status == 401 && errorCode == nil {
                // A plain UNAUTHENTICATED: the OAuth access token expired or was revoked.
                return .refreshCredentialAndRetry(otherwise: .configurationError(reason: text))
            }
            if status == 401 || status == 403 { return .final(.configurationError(reason: text)) }
            if status >= 500 || status == 429 {
                return .retry(
                    notBefore: retryAfter, freshConnection: false,
                    otherwise: .unavailable(reason: text, retryAfter: retryAfter))
            }
            if status == 404 { return .final(.configurationError(reason: text)) }
            return .final(.rejected(.invalidArgument, reason: text))
        }
    }
}
