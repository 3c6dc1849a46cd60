import Foundation
import Testing

@testable import RelayCore
@testable import RelayHTTP2
@testable import RelayProviders

/// How one APNs answer becomes a verdict: the transport reports a response only when its stream ended with
/// END_STREAM, so the sender trusts it.
@Suite struct APNsResponseTests {
    static let sent = "7c3f6a1e-2b4d-4e8a-9f10-3c5d7e9a1b2c"

    @Test func twoHundredWithoutAnEchoedIDIsDeliveredUnderTheIDSent() {
        let result = APNsUpstream.classify(HTTP2Response(status: 200, headers: [], body: []), sentAPNsID: Self.sent)
        #expect(result.verdict == .final(.delivered(providerMessageID: Self.sent)))
    }

    @Test func theEchoedIDWinsWhenPresent() {
        let response = HTTP2Response(status: 200, headers: [HTTPHeader("apns-id", "abc")], body: [])
        #expect(
            APNsUpstream.classify(response, sentAPNsID: Self.sent).verdict
                == .final(.delivered(providerMessageID: "abc")))
    }

    @Test func anErrorWithItsReasonIsClassified() {
        let response = HTTP2Response(
            status: 410, headers: [], body: Array(#"{"reason":"Unregistered","timestamp":1700000000000}"#.utf8))
        let result = APNsUpstream.classify(response, sentAPNsID: Self.sent)
        #expect(result.reason == "Unregistered")
        #expect(result.status == 410)
        let since = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(result.verdict == .final(.tokenInvalid(.deviceNotRegistered, reason: "Unregistered", since: since)))
    }

    @Test func anErrorWithoutAReadableReasonIsRetriedAsAMissingAnswer() {
        for body in ["", "not json", #"{"reason":400}"#] {
            let result = APNsUpstream.classify(
                HTTP2Response(status: 400, headers: [], body: Array(body.utf8)), sentAPNsID: Self.sent)
            #expect(result == AttemptResult(failure: HTTP2Error(.noResponse)))
            #expect(result.reason == "transport: noResponse")
        }
    }
}
