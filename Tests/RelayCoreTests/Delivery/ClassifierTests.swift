import Foundation
import Testing

@testable import RelayCore

/// The verdict's class, without reason texts: what each classification row is about.
enum VerdictClass: Equatable, Sendable {
    case delivered
    case deviceNotRegistered
    case invalidToken
    case rejected(DeliveryOutcome.RejectionCode)
    case configuration
    case retryThenUnavailable(fresh: Bool)
    case retryThenRateExceeded
    case refreshCredential

    init(_ verdict: UpstreamVerdict) {
        switch verdict {
        case .final(.delivered): self = .delivered
        case .final(.tokenInvalid(.deviceNotRegistered, _, _)): self = .deviceNotRegistered
        case .final(.tokenInvalid(.invalidToken, _, _)): self = .invalidToken
        case .final(.rejected(let code, _)): self = .rejected(code)
        case .final(.configurationError): self = .configuration
        case .final(.unavailable): self = .retryThenUnavailable(fresh: false)  // never produced directly
        case .final(.refused): self = .configuration  // only the relay refuses; a classifier never does
        case .retry(_, let fresh, .unavailable): self = .retryThenUnavailable(fresh: fresh)
        case .retry(_, _, .rejected(.messageRateExceeded, _)): self = .retryThenRateExceeded
        case .retry: self = .refreshCredential  // no other retry shape exists
        case .refreshCredentialAndRetry: self = .refreshCredential
        }
    }
}

@Suite struct APNsClassifierTests {
    @Test(
        arguments: [
            (400, "BadDeviceToken", VerdictClass.invalidToken),
            (400, "DeviceTokenNotForTopic", .configuration),
            (400, "BadTopic", .configuration),
            (400, "TopicDisallowed", .configuration),
            (400, "IdleTimeout", .retryThenUnavailable(fresh: true)),
            (400, "BadCollapseId", .rejected(.invalidArgument)),
            (400, "BadExpirationDate", .rejected(.invalidArgument)),
            (400, "BadMessageId", .rejected(.invalidArgument)),
            (400, "BadPriority", .rejected(.invalidArgument)),
            (400, "DuplicateHeaders", .rejected(.invalidArgument)),
            (400, "InvalidPushType", .rejected(.invalidArgument)),
            (400, "MissingDeviceToken", .rejected(.invalidArgument)),
            (400, "MissingTopic", .rejected(.invalidArgument)),
            (400, "PayloadEmpty", .rejected(.invalidArgument)),
            (403, "ExpiredProviderToken", .refreshCredential),
            (403, "InvalidProviderToken", .configuration),
            (403, "BadCertificate", .configuration),
            (403, "BadCertificateEnvironment", .configuration),
            (403, "Forbidden", .configuration),
            (403, "BadEnvironmentKeyIdInToken", .configuration),
            (403, "MissingProviderToken", .configuration),
            (403, "UnrelatedKeyIdInToken", .retryThenUnavailable(fresh: true)),
            (404, "BadPath", .rejected(.invalidArgument)),
            (405, "MethodNotAllowed", .rejected(.invalidArgument)),
            (410, "Unregistered", .deviceNotRegistered),
            (410, "ExpiredToken", .deviceNotRegistered),
            (413, "PayloadTooLarge", .rejected(.messageTooBig)),
            (429, "TooManyRequests", .retryThenRateExceeded),
            (429, "TooManyProviderTokenUpdates", .retryThenUnavailable(fresh: false)),
            (500, "InternalServerError", .retryThenUnavailable(fresh: false)),
            (503, "ServiceUnavailable", .retryThenUnavailable(fresh: false)),
            (503, "Shutdown", .retryThenUnavailable(fresh: true)),
            (400, "SomethingNew", .rejected(.invalidArgument)),
            (500, "SomethingNew", .retryThenUnavailable(fresh: false)),
            (502, nil, .retryThenUnavailable(fresh: false)),
        ] as [(Int, String?, VerdictClass)])
    func reasonMapsToItsClass(_ status: Int, _ reason: String?, _ expected: VerdictClass) {
        #expect(VerdictClass(APNsClassifier.classify(status: status, reason: reason, apnsID: "id")) == expected)
    }

    @Test func everyDocumentedReasonHasARow() {
        // Guards the table above: a reason added to APNsReason without a decision fails here.
        #expect(APNsReason.allKnown.count == 32)
        #expect(APNsReason.allKnown.values.allSatisfy { if case .unknown = $0 { false } else { true } })
    }

    @Test func successCarriesTheAPNsID() {
        #expect(
            APNsClassifier.classify(status: 200, reason: nil, apnsID: "6e1c2e8a")
                == .final(.delivered(providerMessageID: "6e1c2e8a")))
    }

    @Test func unregisteredCarriesTheTimestamp() {
        let verdict = APNsClassifier.classify(
            status: 410, reason: "Unregistered", timestamp: 1_700_000_000_123, apnsID: nil)
        guard case .final(.tokenInvalid(.deviceNotRegistered, _, let since?)) = verdict else {
            Issue.record("expected a dead token with its timestamp, got \(verdict)")
            return
        }
        #expect(since.timeIntervalSince1970 == 1_700_000_000.123)
    }

    @Test func unknownReasonsNeverRemoveTokens() {
        for status in [400, 403, 404, 410, 429, 500, 503] {
            let verdict = APNsClassifier.classify(status: status, reason: "NeverHeardOfIt", apnsID: nil)
            if case .final(let outcome) = verdict { #expect(!outcome.removeToken) }
        }
    }

    @Test(arguments: [
        (429, "TooManyRequests"),
        (503, "ServiceUnavailable"),
        (503, "Shutdown"),
        (500, "SomethingNew"),
    ])
    func aRetryAfterHeaderIsTheLeastWait(_ status: Int, _ reason: String) {
        let verdict = APNsClassifier.classify(status: status, reason: reason, apnsID: nil, retryAfter: .seconds(7))
        guard case .retry(let notBefore, _, _) = verdict else {
            Issue.record("expected a retry, got \(verdict)")
            return
        }
        #expect(notBefore == .seconds(7))
    }
}

@Suite struct FCMClassifierTests {
    @Test(
        arguments: [
            (404, "UNREGISTERED", nil, VerdictClass.deviceNotRegistered),
            (400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", .invalidToken),
            (400, "INVALID_ARGUMENT", "Invalid value at 'message.data[0].value'", .rejected(.invalidArgument)),
            (400, "INVALID_ARGUMENT", "Message is too big", .rejected(.messageTooBig)),
            (403, "SENDER_ID_MISMATCH", nil, .configuration),
            (429, "QUOTA_EXCEEDED", nil, .retryThenUnavailable(fresh: false)),
            (503, "UNAVAILABLE", nil, .retryThenUnavailable(fresh: false)),
            (500, "INTERNAL", nil, .retryThenUnavailable(fresh: false)),
            (401, "THIRD_PARTY_AUTH_ERROR", nil, .configuration),
            (500, "UNSPECIFIED_ERROR", nil, .retryThenUnavailable(fresh: false)),
            (400, "SOMETHING_NEW", nil, .rejected(.invalidArgument)),
            (503, "SOMETHING_NEW", nil, .retryThenUnavailable(fresh: false)),
        ] as [(Int, String, String?, VerdictClass)])
    func errorCodeMapsToItsClass(_ status: Int, _ code: String, _ message: String?, _ expected: VerdictClass) {
        #expect(VerdictClass(FCMClassifier.classify(status: status, errorCode: code, message: message)) == expected)
    }

    @Test func plainUnauthenticatedRefreshesTheAccessToken() {
        let verdict = FCMClassifier.classify(status: 401, errorCode: nil, rpcStatus: "UNAUTHENTICATED")
        #expect(VerdictClass(verdict) == .refreshCredential)
    }

    @Test func permissionDeniedWithoutDetailIsConfiguration() {
        #expect(
            VerdictClass(FCMClassifier.classify(status: 403, errorCode: nil, rpcStatus: "PERMISSION_DENIED"))
                == .configuration)
    }

    @Test func quotaWaitsAtLeastAMinuteEvenWhenRetryAfterIsShorter() {
        let verdict = FCMClassifier.classify(status: 429, errorCode: "QUOTA_EXCEEDED", retryAfter: .seconds(5))
        guard case .retry(let notBefore?, _, _) = verdict else {
            Issue.record("expected a retry, got \(verdict)")
            return
        }
        #expect(notBefore == .seconds(60))
        let longer = FCMClassifier.classify(status: 429, errorCode: "QUOTA_EXCEEDED", retryAfter: .seconds(90))
        guard case .retry(.seconds(90)?, _, _) = longer else {
            Issue.record("expected Retry-After 90 s to be honoured, got \(longer)")
            return
        }
    }

    @Test func unavailableHonoursRetryAfter() {
        let verdict = FCMClassifier.classify(status: 503, errorCode: "UNAVAILABLE", retryAfter: .seconds(7))
        #expect(
            verdict
                == .retry(
                    notBefore: .seconds(7), freshConnection: false,
                    otherwise: .unavailable(reason: "UNAVAILABLE", retryAfter: .seconds(7))))
    }

    @Test func successCarriesTheMessageName() {
        #expect(
            FCMClassifier.classify(status: 200, errorCode: nil, messageName: "projects/p/messages/1")
                == .final(.delivered(providerMessageID: "projects/p/messages/1")))
    }
}

@Suite struct ExpoClassifierTests {
    @Test(arguments: [
        ("DeviceNotRegistered", VerdictClass.deviceNotRegistered),
        ("MessageTooBig", .rejected(.messageTooBig)),
        ("MessageRateExceeded", .retryThenRateExceeded),
        ("MismatchSenderId", .configuration),
        ("InvalidCredentials", .configuration),
        ("DeveloperError", .retryThenUnavailable(fresh: false)),
        ("ExpoError", .retryThenUnavailable(fresh: false)),
        ("ProviderError", .retryThenUnavailable(fresh: false)),
        ("SomethingNew", .rejected(.invalidArgument)),
    ])
    func ticketErrorMapsToItsClass(_ code: String, _ expected: VerdictClass) {
        #expect(
            VerdictClass(ExpoClassifier.classifyTicket(status: "error", id: nil, error: code, message: "m")) == expected
        )
    }

    @Test func okTicketCarriesItsID() {
        #expect(
            ExpoClassifier.classifyTicket(status: "ok", id: "t-1", error: nil, message: nil)
                == .final(.delivered(providerMessageID: "t-1")))
    }

    @Test(
        arguments: [
            (429, "TOO_MANY_REQUESTS", false, VerdictClass.retryThenUnavailable(fresh: false)),
            (401, "UNAUTHORIZED", false, .configuration),
            (400, "PUSH_TOO_MANY_EXPERIENCE_IDS", false, .rejected(.invalidArgument)),
            (400, "PUSH_TOO_MANY_NOTIFICATIONS", false, .rejected(.invalidArgument)),
            (400, "PUSH_TOO_MANY_RECEIPTS", false, .rejected(.invalidArgument)),
            (400, "VALIDATION_ERROR", false, .rejected(.invalidArgument)),
            (500, "API_ERROR", true, .retryThenUnavailable(fresh: false)),
            (400, "API_ERROR", false, .rejected(.invalidArgument)),
            (503, nil, false, .retryThenUnavailable(fresh: false)),
        ] as [(Int, String?, Bool, VerdictClass)])
    func requestErrorMapsToItsClass(_ status: Int, _ code: String?, _ transient: Bool, _ expected: VerdictClass) {
        #expect(
            VerdictClass(ExpoClassifier.classifyRequest(status: status, code: code, isTransient: transient)) == expected
        )
    }
}
