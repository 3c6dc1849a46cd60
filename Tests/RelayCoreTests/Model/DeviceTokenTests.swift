import Testing

@testable import RelayCore

@Suite struct DeviceTokenTests {
    @Test(arguments: [
        ("ExponentPushToken[xXxXx_1234-abcd]", Provider.expo),
        ("ExpoPushToken[abc123]", .expo),
        (String(repeating: "ab", count: 32), .apns),  // 64 hex characters
        (String(repeating: "AB", count: 100), .apns),  // 200, upper case
        (String(repeating: "ab", count: 101), .fcm),  // 202 hex characters: too long for APNs, fits FCM
        (TestTokens.fcm, .fcm),
        ("a:" + String(repeating: "x", count: 98), .fcm),  // exactly 100
    ])
    func inferenceRecognisesShapes(_ token: String, _ provider: Provider) {
        #expect(DeviceToken.inferProvider(token) == provider)
    }

    @Test(arguments: [
        "",
        "ExponentPushToken[]",  // empty inside
        "ExponentPushToken[abc",  // unterminated
        "ExponentPushToken[a b]",  // space inside
        "ExpoToken[abc]",  // unknown prefix
        String(repeating: "ab", count: 31),  // 62 hex: too short for APNs and FCM
        String(repeating: "a", count: 65),  // odd-length hex
        String(repeating: "x", count: 99),  // too short for FCM
        String(repeating: "x", count: 4097),  // too long for FCM
        String(repeating: "x", count: 120) + "/",  // character outside FCM's set
    ])
    func inferenceRejectsOtherShapes(_ token: String) {
        #expect(DeviceToken.inferProvider(token) == nil)
    }

    @Test func namedProviderDisambiguatesHexTokens() {
        let hex = String(repeating: "0f", count: 64)  // 128 characters: APNs by shape, FCM by character set
        #expect(DeviceToken.inferProvider(hex) == .apns)
        #expect(DeviceToken.matches(hex, provider: .fcm))
        #expect(!DeviceToken.matches(hex, provider: .expo))
    }
}
