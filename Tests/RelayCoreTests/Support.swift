import Foundation
import Testing

@testable import RelayCore

/// Tokens of each provider's shape, used across the tests.
enum TestTokens {
    static let apns = "8f2c0a43e1b7d9f6" + String(repeating: "0123456789abcdef", count: 3)
    static let fcm = "fKq9Zx1:APA91b" + String(repeating: "Hq3_Vw-8", count: 18)
    static let expo = "ExponentPushToken[xXxXx_1234-abcdEFGH]"

    static func token(for provider: Provider) -> String {
        switch provider {
        case .apns: apns
        case .fcm: fcm
        case .expo: expo
        }
    }
}

/// Parses a JSON literal written in a test.
func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    try #require(JSONValue.decode(Array(text.utf8)), "not JSON: \(text)", sourceLocation: sourceLocation)
}

/// Parses one message and returns its issues (empty when it is valid).
func issues(ofMessage text: String) throws -> [ValidationIssue] {
    var found: [ValidationIssue] = []
    let message = PushMessage.parse(try json(text), at: .root, issues: &found)
    #expect((message == nil) == !found.isEmpty, "a message is returned exactly when there are no issues")
    return found
}

/// Parses one message that must be valid and returns its pushes.
func pushes(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [ResolvedPush] {
    var found: [ValidationIssue] = []
    let message = PushMessage.parse(try json(text), at: .root, issues: &found)
    #expect(found.isEmpty, "unexpected issues: \(found)", sourceLocation: sourceLocation)
    return try #require(message, sourceLocation: sourceLocation).pushes
}

/// The settings every payload test builds with.
let testSettings = PayloadSettings(
    apnsTopic: "com.example.oncall",
    apnsDefaultEnvironment: .production,
    androidCriticalChannelId: "oncall_critical",
    fcmProjectId: "demo-project"
)
/// 2027-01-15T08:00:00Z, the fixed "now" of payload tests.
let testNow = Date(timeIntervalSince1970: 1_800_000_000)
// A fixed apns-id, so built requests are reproducible.
let testAPNsID = UUID(
    uuid: (0x6E, 0x1C, 0x2E, 0x8A, 0x7D, 0x3B, 0x4F, 0x0A, 0x9C, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77))
