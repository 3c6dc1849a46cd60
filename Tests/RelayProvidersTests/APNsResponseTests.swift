import Testing

@testable import RelayCore
@testable import RelayHTTP2
@testable import RelayProviders

/// How one APNs answer becomes a verdict: the transport reports a response only when its stream ended with
/// END_STREAM, so the sender trusts it.
@Suite struct APNsResponseTests {
    static let sent = "7c3f6a1e-2b4d-4e8a-9f10-3c5d7e9a1b2c"

    @Test func twoHundredWithoutAnEchoedIDIsDeliveredUnderTheIDSent() {
        let result = APNsSender.classify(HTTP2Response(status: 200, headers: [], body: []), sentAPNsID: Self.sent)
        #expect(result.verdict == .final(.delivered(providerMessageID: Self.sent)))
    }

    @Test func theEchoedIDWinsWhenPresent() {
        let response = HTTP2Response(status: 200, headers: [HTTPHeader("apns-id", "abc")], body: [])
        #expect(APNsSender.classify(response, sentAPNsID: Self.sent).verdict == .final(.delivered(providerMessageID: "abc")))
    }

    @Test func anErrorWithItsReasonIsClassified() {
        let response = HTTP2Response(status: 410, headers: [], body: Array(#"{"reason":"Unregistered","timestamp":1700000000000}"#.utf8))
        let result = APNsSender.classify(response, sentAPNsID: Self.sent)
        #expect(result.reason == "Unregistered")
        #expect(result.status == 410)
    }
}
