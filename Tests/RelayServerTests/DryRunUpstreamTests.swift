import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayProviders
import RelaySimulator
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Dry runs through a relay built from a configuration file, as `pushrelay serve` builds it, whose upstreams are the
/// provider simulator: the upstream request a dry run answers is the golden files' (`Fixtures/Mapping` of
/// `RelayCoreTests`), for every provider and every file, and nothing reaches the simulator, no receipt or usage is
/// stored and the tenant's limits are untouched, so that a push afterwards still goes.
@Suite(.timeLimit(.minutes(1)))
struct DryRunUpstreamTests {
    static let tokens: [Provider: String] = [
        .apns: "8f2c0a43e1b7d9f6" + String(repeating: "0123456789abcdef", count: 3),
        .fcm: "fKq9Zx1:APA91b" + String(repeating: "Hq3_Vw-8", count: 18),
        .expo: "ExponentPushToken[xXxXx_1234-abcdEFGH]",
    ]

    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("RelayCoreTests/Fixtures/Mapping")

    /// The golden files, by name.
    static func goldenFiles() throws -> [(name: String, fixture: [String: JSONValue])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter { $0.hasSuffix(".json") }
        return try names.sorted().map { name in
            let data = try Data(contentsOf: fixtures.appendingPathComponent(name))
            return (name, try #require(JSONValue.decode(data)?.objectValue, "\(name)"))
        }
    }

    /// Every provider, the golden files' settings (topic, project, critical channel, production by default), each
    /// endpoint the simulator.
    static func relayConf(
        simulator: ProviderSimulator,
        credentials: SimulatorCredentials,
        files: SimulatorCredentials.Files
    ) -> String {
        func string(_ value: String) -> String { SimulatorCredentials.tomlString(value) }
        return """
            [store]
            url = "sqlite://:memory:"

            [upstream]
            ca_file = \(string(simulator.caFilePath))

            [apns]
            team_id = \(string(credentials.apnsTeamID))
            key_id = \(string(credentials.apnsKeyID))
            key_file = \(string(files.apnsKey))
            topic = \(string(credentials.apnsBundleID))
            endpoint = \(string(simulator.baseURL))
            sandbox_endpoint = \(string(simulator.baseURL))

            [fcm]
            service_account_file = \(string(files.serviceAccount))
            endpoint = \(string(simulator.baseURL))

            [expo]
            endpoint = \(string(simulator.baseURL))

            [audit]
            instance = "dry-run-test"

            """
    }

    @Test func everyProviderAnswersTheGoldenUpstreamRequestAndNothingLeavesOrIsKept() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("relay-dry-run-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let credentials = try SimulatorCredentials()
        let simulator = try await ProviderSimulator.start(configuration: credentials.simulatorConfiguration())
        do {
            try await check(simulator: simulator, credentials: credentials, directory: directory)
        } catch {
            try? await simulator.shutdown()
            throw error
        }
        try await simulator.shutdown()
    }

    private func check(simulator: ProviderSimulator, credentials: SimulatorCredentials, directory: String) async throws
    {
        let files = try credentials.write(to: directory + "/keys", tokenURI: simulator.fcmTokenURI)
        let path = directory + "/relay.conf"
        try Self.relayConf(simulator: simulator, credentials: credentials, files: files)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = try RelayConfiguration.load(path: path, environment: [:])
        let store = try await RelayAssembly.openStore(configuration)
        let logger = Logger(label: "dry-run-test") { _ in SwiftLogNoOpLogHandler() }
        // The golden files' time: a `ttl` becomes the same `apns-expiration`, a Live Activity the same `timestamp`.
        let clock = ManualClock(date: Date(timeIntervalSince1970: 1_800_000_000))
        let assembly = try RelayAssembly.make(
            configuration: configuration, store: store, logger: logger, clock: .manual(clock))
        let relay = assembly.relay

        // acme may send critical alerts and has room for one notification a day; solo may not send them.
        let limits = RateLimits(ratePerSecond: 1, burst: 1, dailyQuota: 1, perDevicePerMinute: 1)
        let (acme, acmeKey) = try await TestRelay.addTenant(
            to: store, name: "acme", limits: limits, allowCriticalAlerts: true)
        let (_, soloKey) = try await TestRelay.addTenant(to: store, name: "solo", allowCriticalAlerts: false)
        let application = try buildApplication(
            RelayApplicationParts(relay: relay, services: assembly.services.filter { $0 is ClientShutdownService }))

        let golden = try Self.goldenFiles()
        #expect(golden.count >= 20)
        let compared = try await application.test(.router) { client in
            var compared: [Provider: Int] = [:]
            // One dry run per golden file, with a message for each provider that can carry it.
            for (name, fixture) in golden {
                let message = try #require(fixture["message"]?.objectValue)
                let providers = Provider.allCases.filter { fixture[$0.rawValue]?.objectValue?["refused"] == nil }
                let messages = providers.map { provider in
                    var input = message
                    input["to"] = .string(Self.tokens[provider] ?? "")
                    input["provider"] = .string(provider.rawValue)
                    return JSONValue.object(input)
                }
                let body = JSONValue.object(["dryRun": .bool(true), "messages": .array(messages)])
                let response = try await client.post("/v1/push", key: acmeKey, json: body.encodedString())
                #expect(response.status == .ok, "\(name): \(String(buffer: response.body))")
                for (index, provider) in providers.enumerated() {
                    let answer = try #require(response.json?["data"]?[index], "\(name) \(provider)")
                    #expect(answer["status"] == .string("pending"), "\(name) \(provider): \(answer.encodedString())")
                    let upstream = try #require(answer["upstream"], "\(name) \(provider)")
                    let expected = try #require(fixture[provider.rawValue], "\(name) \(provider)")
                    try Self.expect(
                        upstream, matches: expected, provider: provider, baseURL: simulator.baseURL, name: name)
                    compared[provider, default: 0] += 1
                }
            }

            // A critical alert for a tenant that may not send them: refused, with no upstream request; the push that
            // is not critical beside it would go.
            let token = Self.tokens[.apns] ?? ""
            let refused = try await client.post(
                "/v1/push", key: soloKey,
                json:
                    #"{"dryRun":true,"messages":[{"to":"\#(token)","title":"Incident #12","isCriticalAlert":true},{"to":"\#(token)","title":"FYI"}]}"#
            )
            #expect(refused.json?["data"]?[0]?["status"] == .string("error"))
            #expect(refused.json?["data"]?[0]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
            #expect(refused.json?["data"]?[0]?["upstream"] == nil)
            #expect(refused.json?["data"]?[1]?["status"] == .string("pending"))
            #expect(refused.json?["data"]?[1]?["upstream"]?["path"] == .string("/3/device/\(token)"))

            // The Expo-compatible route: Expo's ticket, and the array Expo would be sent.
            let expoToken = Self.tokens[.expo] ?? ""
            let expo = try await client.post(
                "/--/api/v2/push/send", key: acmeKey, json: #"{"to":"\#(expoToken)","title":"Hello","body":"World"}"#,
                headers: [HTTPField.Name("Prefer")!: "dry-run"])
            #expect(expo.json?["data"]?["status"] == .string("ok"))
            #expect(expo.json?["data"]?["upstream"]?["path"] == .string("/--/api/v2/push/send"))
            #expect(expo.json?.encodedString().contains(simulator.baseURL) == false)
            #expect(
                expo.json?["data"]?["upstream"]?["body"]
                    == .array([
                        .object([
                            "to": .string(expoToken), "title": .string("Hello"), "body": .string("World"),
                            "sound": .string("default"),
                        ])
                    ]))

            // A payload over the provider's limit: the ticket a send would give, before any attempt.
            let long = String(repeating: "x", count: 4100)
            let tooBig = try await client.post(
                "/v1/push", key: soloKey, json: #"{"dryRun":true,"messages":[{"to":"\#(token)","body":"\#(long)"}]}"#)
            #expect(tooBig.json?["data"]?[0]?["status"] == .string("error"))
            #expect(tooBig.json?["data"]?[0]?["details"]?["error"] == .string("MessageTooBig"))
            #expect(tooBig.json?["data"]?[0]?["upstream"] == nil)

            // Nothing reached the simulator, not even for a credential.
            #expect(simulator.received().isEmpty)
            #expect(try await store.usage(tenantID: acme.id, fromDay: "2000-01-01").isEmpty)
            #expect(try await store.journalStatistics().entries == 0)

            // The tenant's bucket, daily quota and device allowance (one each) are whole: a push still goes.
            let push = try await client.post(
                "/v1/push", key: acmeKey, json: #"{"messages":[{"to":"\#(token)","title":"Real"}]}"#)
            #expect(push.json?["data"]?[0]?["status"] == .string("ok"), "\(String(buffer: push.body))")
            let over = try await client.post(
                "/v1/push", key: acmeKey, json: #"{"messages":[{"to":"\#(token)","title":"Real"}]}"#)
            #expect(over.status == .tooManyRequests)
            return compared
        }
        #expect(compared[.apns] == golden.count)
        #expect((compared[.fcm] ?? 0) > 0 && (compared[.expo] ?? 0) > 0)
        #expect(simulator.received(.apns).map(\.path) == ["/3/device/\(Self.tokens[.apns] ?? "")"], "the push alone")
        #expect(try await store.pruneReceipts(now: .distantFuture) == 1, "the push's receipt alone")

        // One audit record per dry run, and the push's.
        let records = try await store.auditRecords(chain: "dry-run-test", after: 0, limit: 1000)
        let events = records.map(\.record.event)
        #expect(events.filter { $0 == .dryRun }.count == golden.count + 3)
        #expect(events.filter { $0 == .push }.count == 1)
        #expect(records.allSatisfy { $0.record.event != .dryRun || $0.record.tokenFingerprint == nil })
    }

    /// The answer's upstream request against a golden file's: APNs's path, headers (its `apns-id` a fresh UUID, and
    /// `content-type`) and body, at the configured endpoint; FCM's path and body; Expo's message, alone in the array
    /// posted to `/--/api/v2/push/send`. Never an `authorization` header.
    static func expect(
        _ upstream: JSONValue,
        matches golden: JSONValue,
        provider: Provider,
        baseURL: String,
        name: String
    ) throws {
        let token = tokens[provider] ?? ""
        let expected = substitute(golden, "$TOKEN", with: token)
        let headers = try #require(upstream["headers"]?.objectValue, "\(name) \(provider)")
        #expect(upstream["method"] == .string("POST"))
        #expect(headers["authorization"] == nil && headers["Authorization"] == nil)
        #expect(headers["content-type"] == .string("application/json"), "\(name) \(provider)")
        let path = upstream["path"]?.stringValue ?? ""
        #expect(upstream["url"] == nil, "the operator's endpoint is not shown: \(name) \(provider)")
        #expect(!path.isEmpty)
        switch provider {
        case .apns:
            #expect(upstream["path"] == expected["path"], "\(name)")
            #expect(upstream["body"] == expected["body"], "\(name): \(upstream["body"]?.encodedString() ?? "")")
            let apnsID = try #require(headers["apns-id"]?.stringValue, "\(name)")
            #expect(UUID(uuidString: apnsID) != nil && apnsID == apnsID.lowercased(), "\(name)")
            var sent = headers
            sent["apns-id"] = nil
            sent["content-type"] = nil
            var golden = expected["headers"]?.objectValue ?? [:]
            golden["apns-id"] = nil
            #expect(JSONValue.object(sent) == .object(golden), "\(name)")
        case .fcm:
            #expect(upstream["path"] == expected["path"], "\(name)")
            #expect(upstream["body"] == expected["body"], "\(name): \(upstream["body"]?.encodedString() ?? "")")
            #expect(Set(headers.keys) == ["content-type"], "\(name)")
        case .expo:
            #expect(path == "/--/api/v2/push/send")
            #expect(upstream["body"] == .array([expected]), "\(name): \(upstream["body"]?.encodedString() ?? "")")
            #expect(headers["accept"] == .string("application/json"))
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
