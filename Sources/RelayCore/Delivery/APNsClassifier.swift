import Foundation

/// Maps one APNs answer to what to do with it.
package enum APNsClassifier {
    /// - Parameters:
    ///   - status: the HTTP status of the response.
    ///   - reason: the `reason` of the error body, when there was one.
    ///   - timestamp: the 410 body's `timestamp` (milliseconds since 1970), when given.
    ///   - apnsID: the `apns-id` header of the response.
    ///   - retryAfter: the `retry-after` header, when given: Apple documents none, but a retry never comes sooner.
    package static func classify(
        status: Int,
        reason: String?,
        timestamp: Int64? = nil,
        apnsID: String?,
        retryAfter: Duration? = nil
    ) -> UpstreamVerdict {
        if status == 200 { return .final(.delivered(providerMessageID: apnsID)) }
        let text = reason ?? "HTTP \(status)"
        let since = timestamp.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        switch reason.map(APNsReason.init) {
        case .unregistered?, .expiredToken?:
            return .final(.tokenInvalid(.deviceNotRegistered, reason: text, since: since))
        case .badDeviceToken?:
            return .final(.tokenInvalid(.invalidToken, reason: text, since: nil))
        case .deviceTokenNotForTopic?, .badTopic?, .topicDisallowed?, .badCertificate?, .badCertificateEnvironment?,
            .invalidProviderToken?, .forbidden?, .badEnvironmentKeyIdInToken?, .missingProviderToken?:
            // A token is never blamed for the operator's topic, key or environment.
            return .final(.configurationError(reason: text))
        case .expiredProviderToken?:
            // A token refused again right after renewal means the clock is off: the operator's problem.
            return .refreshCredentialAndRetry(otherwise: .configurationError(reason: text))
        case .payloadTooLarge?:
            return .final(.rejected(.messageTooBig, reason: text))
        case .badCollapseId?, .badExpirationDate?, .badMessageId?, .badPriority?, .duplicateHeaders?,
            .invalidPushType?, .missingDeviceToken?, .missingTopic?, .payloadEmpty?, .badPath?, .methodNotAllowed?:
            return .final(.rejected(.invalidArgument, reason: text))
        case .idleTimeout?, .unrelatedKeyIdInToken?, .shutdown?:
            // The connection is at fault (idle, bound to another key, closing): retry on a fresh one.
            return .retry(
                notBefore: retryAfter, freshConnection: true,
                otherwise: .unavailable(reason: text, retryAfter: retryAfter))
        case .tooManyRequests?:
            return .retry(
                notBefore: retryAfter,
                freshConnection: false,
                otherwise: .rejected(.messageRateExceeded, reason: text)
            )
        case .tooManyProviderTokenUpdates?, .internalServerError?, .serviceUnavailable?:
            return .retry(
                notBefore: retryAfter, freshConnection: false,
                otherwise: .unavailable(reason: text, retryAfter: retryAfter))
        case .unknown?, nil:
            // Apple: unknown reasons are transient on 5xx and the relay's problem on 4xx; never token removal.
            if status >= 500 || status == 429 {
                return .retry(
                    notBefore: retryAfter, freshConnection: false,
                    otherwise: .unavailable(reason: text, retryAfter: retryAfter))
            }
            return .final(.rejected(.invalidArgument, reason: text))
        }
    }
}
