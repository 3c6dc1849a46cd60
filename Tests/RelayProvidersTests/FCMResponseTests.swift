import Testing

@testable import RelayCore
@testable import RelayHTTP2
@testable import RelayProviders

/// How one FCM answer's `google.rpc.Status` body becomes a verdict (PROTOCOLS.md §2.2).
@Suite struct FCMResponseTests {
    func classify(_ status: Int, _ body: String, headers: [HTTPHeader] = []) -> AttemptResult {
        FCMUpstream.classify(HTTP2Response(status: status, headers: headers, body: Array(body.utf8)))
    }

    @Test func aDeliveryCarriesTheMessageName() {
        let result = classify(200, #"{"name":"projects/p/messages/0:1"}"#)
        #expect(result.verdict == .final(.delivered(providerMessageID: "projects/p/messages/0:1")))
    }

    @Test func twoHundredWithoutAMessageNameIsRetriedAsAMissingAnswer() {
        #expect(classify(200, "{}") == AttemptResult(failure: HTTP2Error(.noResponse)))
    }

    @Test func theFcmErrorDetailDecides() {
        let body = #"""
            {"error":{"code":404,"status":"NOT_FOUND","message":"Requested entity was not found.",
            "details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}
            """#
        let result = classify(404, body)
        #expect(result.reason == "UNREGISTERED")
        #expect(result.verdict == .final(.tokenInvalid(.deviceNotRegistered, reason: "UNREGISTERED", since: nil)))
    }

    @Test func aPlainUnauthenticatedRenewsTheAccessToken() {
        let body =
            #"{"error":{"code":401,"status":"UNAUTHENTICATED","message":"Request had invalid authentication credentials."}}"#
        let result = classify(401, body)
        #expect(result.reason == "UNAUTHENTICATED")
        #expect(result.verdict == .refreshCredentialAndRetry(otherwise: .configurationError(reason: "UNAUTHENTICATED")))
    }

    @Test func detailsThatAreNotAllObjectsGiveNoErrorCode() {
        let body =
            #"{"error":{"code":401,"status":"UNAUTHENTICATED","details":[{"errorCode":"THIRD_PARTY_AUTH_ERROR"},"x"]}}"#
        #expect(classify(401, body).reason == "UNAUTHENTICATED")
    }

    @Test func retryAfterInSecondsIsTheLeastWait() {
        let body = #"{"error":{"code":503,"status":"UNAVAILABLE","details":[{"errorCode":"UNAVAILABLE"}]}}"#
        let result = classify(503, body, headers: [HTTPHeader("retry-after", " 7 ")])
        let otherwise = DeliveryOutcome.unavailable(reason: "UNAVAILABLE", retryAfter: .seconds(7))
        #expect(result.verdict == .retry(notBefore: .seconds(7), freshConnection: false, otherwise: otherwise))
    }
}
