/// APNs's error reasons (the `reason` of an error response), with a fallback for reasons Apple adds later.
package enum APNsReason: Hashable, Sendable {
    case badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic
    case deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken, missingTopic
    case payloadEmpty, topicDisallowed
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden, invalidProviderToken
    case missingProviderToken, unrelatedKeyIdInToken, badEnvironmentKeyIdInToken
    case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge
    case tooManyProviderTokenUpdates, tooManyRequests, internalServerError, serviceUnavailable, shutdown
    case unknown(String)

    private static let known: [String: APNsReason] = [
        "BadCollapseId": .badCollapseId, "BadDeviceToken": .badDeviceToken, "BadExpirationDate": .badExpirationDate,
        "BadMessageId": .badMessageId, "BadPriority": .badPriority, "BadTopic": .badTopic,
        "DeviceTokenNotForTopic": .deviceTokenNotForTopic, "DuplicateHeaders": .duplicateHeaders,
        "IdleTimeout": .idleTimeout, "InvalidPushType": .invalidPushType, "MissingDeviceToken": .missingDeviceToken,
        "MissingTopic": .missingTopic, "PayloadEmpty": .payloadEmpty, "TopicDisallowed": .topicDisallowed,
        "BadCertificate": .badCertificate, "BadCertificateEnvironment": .badCertificateEnvironment,
        "ExpiredProviderToken": .expiredProviderToken, "Forbidden": .forbidden,
        "InvalidProviderToken": .invalidProviderToken, "MissingProviderToken": .missingProviderToken,
        "UnrelatedKeyIdInToken": .unrelatedKeyIdInToken, "BadEnvironmentKeyIdInToken": .badEnvironmentKeyIdInToken,
        "BadPath": .badPath, "MethodNotAllowed": .methodNotAllowed, "ExpiredToken": .expiredToken,
        "Unregistered": .unregistered, "PayloadTooLarge": .payloadTooLarge,
        "TooManyProviderTokenUpdates": .tooManyProviderTokenUpdates, "TooManyRequests": .tooManyRequests,
        "InternalServerError": .internalServerError, "ServiceUnavailable": .serviceUnavailable,
        "Shutdown": .shutdown,
    ]

    package init(_ text: String) {
        self = Self.known[text] ?? .unknown(text)
    }

    /// All documented reasons, for tests and documentation.
    package static var allKnown: [String: APNsReason] { known }

    package var rawValue: String {
        if case .unknown(let text) = self { return text }
        return Self.known.first { $0.value == self }?.key ?? ""
    }
}
