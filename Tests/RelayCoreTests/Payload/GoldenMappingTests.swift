import Foundation
import Testing

@testable import RelayCore

/// Every row of the criticality mapping table and every push type, as golden files.
///
/// Each file in `Fixtures/Mapping` holds a message (without `to`) and the exact APNs request, FCM request and Expo
/// message it must become; `$TOKEN` stands for the provider's test token. Comparison is structural: key order and
/// number spelling (`1` and `1.0`) do not matter, every key and value does.
///
/// A provider that cannot carry the message (a Live Activity to FCM or Expo, a localised alert to Expo) holds
/// `{"refused": "<path>"}` instead: validation must refuse the message with an issue at that path.
///
/// To add a row, write a file with `about` and `message` only and run the tests once with
/// `RELAY_RECORD_GOLDEN=1`: the missing outputs are written for review. Recorded outputs are never overwritten.
@Suite struct GoldenMappingTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Mapping")

    static let fixtureNames: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.sorted()
    }()

    @Test func fixturesArePresent() {
        // The mapping table's rows (critical in three spellings, OneUptime's combination, not critical) and the ten
        // push types.
        #expect(Self.fixtureNames.count >= 20)
    }

    @Test(arguments: fixtureNames)
    func providerRequestsMatchGoldenFile(_ name: String) throws {
        let url = Self.directory.appendingPathComponent(name)
        var fixture = try #require(JSONValue.decode(try Data(contentsOf: url))?.objectValue, "\(name) is not an object")
        let message = try #require(fixture["message"]?.objectValue, "\(name) has no message")
        var recorded = false

        for provider in Provider.allCases {
            let token = TestTokens.token(for: provider)
            var input = message
            input["to"] = .string(token)
            input["provider"] = .string(provider.rawValue)
            var issues: [ValidationIssue] = []
            let validated = PushMessage.parse(.object(input), at: .root, issues: &issues)
            if let refused = fixture[provider.rawValue]?.objectValue?["refused"] {
                let paths: [String] =
                    switch refused {
                    case .array(let items): items.compactMap(\.stringValue)
                    case .string(let path): [path]
                    default: []
                    }
                #expect(validated == nil, "\(name) \(provider.rawValue): not refused")
                #expect(
                    issues.map(\.path).sorted() == paths, "\(name) \(provider.rawValue): \(issues.map(\.description))")
                continue
            }
            #expect(issues.isEmpty, "\(name): \(issues)")
            let push = try #require(validated?.pushes.first)
            let actual = try Self.build(push, provider: provider)

            guard let expected = fixture[provider.rawValue] else {
                if ProcessInfo.processInfo.environment["RELAY_RECORD_GOLDEN"] == "1" {
                    fixture[provider.rawValue] = Self.substitute(actual, token, with: "$TOKEN")
                    recorded = true
                } else {
                    Issue.record("\(name) has no expected \(provider.rawValue) output")
                }
                continue
            }
            let expectedWithToken = Self.substitute(expected, "$TOKEN", with: token)
            #expect(
                actual == expectedWithToken,
                "\(name) \(provider.rawValue):\nactual   \(actual.encodedString())\nexpected \(expectedWithToken.encodedString())"
            )
        }
        if recorded {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(JSONValue.object(fixture)).write(to: url)
        }
    }

    /// The built request as JSON: APNs environment, path, headers and body; FCM path and body; the Expo message.
    static func build(_ push: ResolvedPush, provider: Provider) throws -> JSONValue {
        switch provider {
        case .apns:
            let request = try APNsRequest(push: push, settings: testSettings, now: testNow, apnsID: testAPNsID)
            return .object([
                "environment": .string(request.environment.rawValue),
                "path": .string(request.path),
                "headers": .object(
                    Dictionary(uniqueKeysWithValues: request.headers.map { ($0.name, .string($0.value)) })),
                "body": try #require(JSONValue.decode(request.body)),
            ])
        case .fcm:
            let request = try FCMRequest(push: push, settings: testSettings, now: testNow)
            return .object(["path": .string(request.path), "body": try #require(JSONValue.decode(request.body))])
        case .expo:
            return .object(try ExpoMessage(push: push, settings: testSettings).json)
        }
    }

    /// Replaces every string that contains `target` (tokens appear inside paths too).
    static func substitute(_ value: JSONValue, _ target: String, with replacement: String) -> JSONValue {
        switch value {
        case .string(let text): .string(text.replacingOccurrences(of: target, with: replacement))
        case .array(let items): .array(items.map { substitute($0, target, with: replacement) })
        case .object(let members): .object(members.mapValues { substitute($0, target, with: replacement) })
        default: value
        }
    }
}
