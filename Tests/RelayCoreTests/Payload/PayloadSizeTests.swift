import Foundation
import Testing

@testable import RelayCore

/// Size limits are checked on the built bytes, and a refusal reports the actual size.
@Suite struct PayloadSizeTests {
    /// A message whose `data.pad` string is `padding` bytes long.
    func push(_ provider: Provider, padding: Int, extra: String = "") throws -> ResolvedPush {
        let pad = String(repeating: "p", count: padding)
        let text = #"{"to":"\#(TestTokens.token(for: provider))","data":{"pad":"\#(pad)"}\#(extra)}"#
        return try #require(try pushes(text).first)
    }

    func apnsSize(_ push: ResolvedPush) -> Int {
        do {
            return try APNsRequest(push: push, settings: testSettings, now: testNow, apnsID: testAPNsID).body.count
        } catch {
            return error.size
        }
    }

    @Test func apnsAcceptsExactly4096Bytes() throws {
        let overhead = apnsSize(try push(.apns, padding: 0))
        let fits = try push(.apns, padding: 4096 - overhead)
        #expect(
            try APNsRequest(push: fits, settings: testSettings, now: testNow, apnsID: testAPNsID).body.count == 4096)

        let over = try push(.apns, padding: 4097 - overhead)
        #expect(throws: MessageTooBig(provider: .apns, size: 4097, limit: 4096)) {
            try APNsRequest(push: over, settings: testSettings, now: testNow, apnsID: testAPNsID)
        }
    }

    @Test func voipAllows5120Bytes() throws {
        let voip = #","pushType":"voip""#
        let overhead = apnsSize(try push(.apns, padding: 0, extra: voip))
        let fits = try push(.apns, padding: 5120 - overhead, extra: voip)
        #expect(
            try APNsRequest(push: fits, settings: testSettings, now: testNow, apnsID: testAPNsID).body.count == 5120)
        let over = try push(.apns, padding: 5121 - overhead, extra: voip)
        #expect(throws: MessageTooBig(provider: .apns, size: 5121, limit: 5120)) {
            try APNsRequest(push: over, settings: testSettings, now: testNow, apnsID: testAPNsID)
        }
    }

    @Test func fcmLimitsNotificationAndDataTo4096Bytes() throws {
        // {"pad":"…"} is 10 bytes around the padding.
        let fits = try push(.fcm, padding: 4086)
        #expect(throws: Never.self) { try FCMRequest(push: fits, settings: testSettings, now: testNow) }
        let over = try push(.fcm, padding: 4087)
        #expect(throws: MessageTooBig(provider: .fcm, size: 4097, limit: 4096)) {
            try FCMRequest(push: over, settings: testSettings, now: testNow)
        }
    }

    @Test func expoLimitsTheMessageTo4096Bytes() throws {
        func size(_ push: ResolvedPush) -> Int {
            do {
                var json = try ExpoMessage(push: push, settings: testSettings).json
                json["to"] = nil
                return JSONValue.object(json).encodedBytes().count
            } catch {
                return error.size
            }
        }
        let overhead = size(try push(.expo, padding: 0))
        let fits = try push(.expo, padding: 4096 - overhead)
        #expect(size(fits) == 4096)
        #expect(throws: Never.self) { try ExpoMessage(push: fits, settings: testSettings) }
        let over = try push(.expo, padding: 4097 - overhead)
        #expect(throws: MessageTooBig(provider: .expo, size: 4097, limit: 4096)) {
            try ExpoMessage(push: over, settings: testSettings)
        }
    }
}
