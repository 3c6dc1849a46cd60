import ArgumentParser
import Foundation
import Logging
import RelayApplication
import RelayCore
import RelayHTTP2
import RelayProviders
import RelayServer
import RelaySimulator
import RelayStore
import ServiceLifecycle

/// `pushrelay demo`: the whole path of a push on one machine, in a few seconds.
///
/// Starts the APNs/FCM/Expo simulator and the relay (TLS, HTTP/2) on free ports with a temporary store, creates a
/// demo tenant and key, sends an iOS critical alert, an Android critical alert, an Expo push, a push to a dead
/// token, a Live Activity update and a silent badge clear through the native API, prints each ticket, the receipts
/// and what the simulated APNs received for the last two, and exits 0 when every outcome is the expected one (the
/// Live Activity a `liveactivity` push with its event, the badge clear an alert without a sound). A second app,
/// `beta` (its own APNs key and topic, its own FCM project), has a simulator of its own that knows only its
/// credentials; the demo sends an iOS alert for it too.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the relay against the built-in simulator and send sample pushes."
    )

    @Flag(name: .long, help: "Show the relay's log lines.")
    var verbose = false

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pushrelay-demo-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var logger = Logger(label: "pushrelay.demo")
        logger.logLevel = verbose ? .debug : .critical

        // 1. The upstream simulator, with fresh credentials.
        let credentials = try SimulatorCredentials()
        let simulator = try await ProviderSimulator.start(configuration: credentials.simulatorConfiguration())
        let files = try credentials.write(to: directory, tokenURI: simulator.fcmTokenURI)
        say("Simulator (APNs, FCM, Expo) on \(simulator.baseURL)")
        // The second app's upstream knows only the second app's key, topic and project.
        let betaCredentials = try SimulatorCredentials.beta()
        let betaSimulator = try await ProviderSimulator.start(configuration: betaCredentials.simulatorConfiguration())
        let betaFiles = try betaCredentials.write(to: directory + "/beta", tokenURI: betaSimulator.fcmTokenURI)
        say("Simulator of app 'beta' (APNs, FCM) on \(betaSimulator.baseURL)")
        let caFile = directory + "/upstream-ca.pem"
        let authorities = try [simulator.caFilePath, betaSimulator.caFilePath].map {
            try String(contentsOfFile: $0, encoding: .utf8)
        }
        try authorities.joined(separator: "\n").write(toFile: caFile, atomically: true, encoding: .utf8)

        // 2. The relay's configuration, store and TLS identity, all temporary.
        let config = """
            [store]
            url = "sqlite://relay.db"

            """
            + credentials.relayConfiguration(caFile: caFile, files: files, endpoint: simulator.baseURL)
            + betaCredentials.appRelayConfiguration(app: "beta", files: betaFiles, endpoint: betaSimulator.baseURL)
        let configPath = directory + "/relay.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let configuration = try RelayConfiguration.load(path: configPath, environment: [:])
        let store = try await RelayAssembly.openStore(configuration)
        let assembly = try RelayAssembly.make(
            configuration: configuration, store: store, logger: logger, expoReceiptDelay: .zero)

        let tenant = Tenant(name: "demo", allowCriticalAlerts: true, apps: [AppName.default, "beta"])
        try await store.createTenant(tenant)
        let key = TenantKeys.issue()
        try await store.createKey(TenantKeyRecord(id: key.id, tenantID: tenant.id, secretHash: key.secretHash))
        say("Tenant 'demo' (critical alerts allowed; apps default and beta), key \(key.id)")

        let identity = try HTTP2TestIdentity.generate()
        let leaf = try identity.issueServerCertificate(host: "127.0.0.1")
        let relayCA = try identity.write(to: directory + "/relay-ca")

        // 3. The relay, on a free port, with TLS and HTTP/2.
        let port = AsyncStream.makeStream(of: Int.self)
        let app = try buildApplication(
            RelayApplicationParts(
                relay: assembly.relay,
                host: "127.0.0.1",
                port: 0,
                tls: (leaf.certificatePEM, leaf.privateKeyPEM),
                services: assembly.services,
                logger: logger,
                onServerRunning: { bound in
                    if let bound { port.continuation.yield(bound) }
                    port.continuation.finish()
                }
            )
        )
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let allGood = try await withThrowingTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                try await group.run()
                return true
            }
            var ports = port.stream.makeAsyncIterator()
            guard let bound = await ports.next() else { throw ValidationError("the relay did not start") }
            say("Relay on https://127.0.0.1:\(bound) (HTTP/2 over TLS)\n")
            let ok = try await Self.exercise(
                url: "https://127.0.0.1:\(bound)", caFile: relayCA, key: key.key, assembly: assembly,
                simulator: simulator, say: say)
            await group.triggerGracefulShutdown()
            _ = try await tasks.next()
            return ok
        }
        try await simulator.shutdown()
        try await betaSimulator.shutdown()
        guard allGood else {
            say("\nSome outcomes were not the expected ones.")
            throw ExitCode(1)
        }
        say("\nEvery outcome was the expected one.")
    }

    /// Sends the sample pushes and prints tickets and receipts; `true` when each outcome is the expected one.
    static func exercise(
        url: String,
        caFile: String,
        key: String,
        assembly: RelayAssembly,
        simulator: ProviderSimulator,
        say: (String) -> Void
    ) async throws -> Bool {
        let client = try HTTP2Pool(configuration: .init(maxConnections: 1, caFile: caFile))
        defer { Task { await client.shutdown() } }
        let iosToken = String(repeating: "a1", count: 32)
        let androidToken = "demo-android:" + String(repeating: "APA91b_x", count: 12)
        let expoToken = "ExponentPushToken[demo-expo-0001]"
        let deadToken = "0410" + String(repeating: "d", count: 60)
        let betaToken = String(repeating: "b2", count: 32)
        let activityToken = String(repeating: "c3", count: 32)
        let badgeToken = String(repeating: "d4", count: 32)
        let samples: [(String, String, String)] = [
            (
                "iOS critical alert", iosToken,
                #""title":"Incident #12","body":"Primary DB unreachable","isCriticalAlert":true,"data":{"incidentId":"12"}"#
            ),
            (
                "Android critical alert", androidToken,
                #""title":"Incident #12","body":"Primary DB unreachable","interruptionLevel":"critical","sound":{"critical":true,"name":"default","volume":1},"provider":"fcm""#
            ),
            ("Expo push", expoToken, #""title":"Deploy finished","body":"v2.4.1 is live""#),
            ("Dead token", deadToken, #""title":"Hello","body":"Anyone there?""#),
            ("iOS alert, app beta", betaToken, #""title":"Beta build","body":"Try the new timeline","app":"beta""#),
            (
                "iOS Live Activity update", activityToken,
                #""liveActivity":{"event":"update","contentState":{"status":"mitigating","responders":3},"staleDate":1900000000}"#
            ),
            ("iOS badge clear (silent)", badgeToken, #""badge":0"#),
        ]
        let messages = samples.map { #"{"to":"\#($0.1)",\#($0.2)}"# }.joined(separator: ",")
        let response = try await client.send(
            HTTP2Request(
                url: url + "/v1/push",
                headers: [
                    HTTPHeader("authorization", "Bearer \(key)"), HTTPHeader("content-type", "application/json"),
                ],
                body: Array(#"{"messages":[\#(messages)]}"#.utf8)
            )
        )
        say("POST /v1/push → HTTP \(response.status)")
        guard response.status == 200, case .array(let tickets)? = JSONValue.decode(response.body)?.objectValue?["data"]
        else {
            say(String(decoding: response.body, as: UTF8.self))
            return false
        }
        var ids: [String] = []
        for ((name, _, _), ticket) in zip(samples, tickets) {
            let fields = ticket.objectValue ?? [:]
            let status = fields["status"]?.stringValue ?? "?"
            let detail =
                fields["details"]?.objectValue?["error"]?.stringValue ?? fields["providerMessageId"]?.stringValue ?? ""
            say(
                "  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(fields["provider"]?.stringValue ?? "?")\t\(status)\t\(detail)"
            )
            if let id = fields["id"]?.stringValue { ids.append(id) }
        }

        // The Expo ticket is followed by a receipt; ask the simulator for it now instead of in 15 minutes.
        await assembly.relay.queue.waitUntilIdle()
        _ = try await assembly.expoReceipts.pollOnce()
        let lookup = try await client.send(
            HTTP2Request(
                url: url + "/v1/receipts",
                headers: [
                    HTTPHeader("authorization", "Bearer \(key)"), HTTPHeader("content-type", "application/json"),
                ],
                body: Array(JSONValue.object(["ids": .array(ids.map(JSONValue.string))]).encodedBytes())
            )
        )
        say("\nPOST /v1/receipts → HTTP \(lookup.status)")
        let receipts = JSONValue.decode(lookup.body)?.objectValue?["data"]?.objectValue ?? [:]
        var outcomes: [String] = []
        for ((name, _, _), id) in zip(samples, ids) {
            let receipt = receipts[id]?.objectValue ?? [:]
            let status = receipt["status"]?.stringValue ?? "absent"
            let error = receipt["details"]?.objectValue?["error"]?.stringValue
            let removeToken = receipt["details"]?.objectValue?["removeToken"] == .bool(true)
            let app = receipt["app"]?.stringValue ?? "?"
            say(
                "  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) app \(app)\t\(status)\(error.map { "\t\($0)" } ?? "")\(removeToken ? "\tremove this token" : "")"
            )
            outcomes.append(error ?? status)
        }
        let delivered = outcomes == ["ok", "ok", "ok", "DeviceNotRegistered", "ok", "ok", "ok"]
        return delivered
            && Self.showPayloads(simulator: simulator, activityToken: activityToken, badgeToken: badgeToken, say: say)
    }

    /// Prints what the simulated APNs received for the Live Activity update and the badge clear, and checks that the
    /// first is a `liveactivity` push with its event and state and the second an alert with a badge and no sound, and
    /// that no push the relay sent would be ignored by a device.
    static func showPayloads(
        simulator: ProviderSimulator,
        activityToken: String,
        badgeToken: String,
        say: (String) -> Void
    ) -> Bool {
        say("\nWhat the simulated APNs received:")
        var good = true
        for (name, token) in [("iOS Live Activity update", activityToken), ("iOS badge clear (silent)", badgeToken)] {
            guard let payload = simulator.lastPayload(for: token) else {
                say("  \(name): nothing")
                good = false
                continue
            }
            let type = payload.headers["apns-push-type"] ?? "?"
            let priority = payload.headers["apns-priority"] ?? "?"
            say(
                "  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(type), priority \(priority): \(payload.bodyText)"
            )
            let aps = payload.json?["aps"]
            if token == activityToken {
                good =
                    good && type == "liveactivity" && aps?["event"]?.stringValue == "update"
                    && aps?["content-state"] != nil && aps?["timestamp"]?.numberValue != nil
            } else {
                good = good && type == "alert" && aps?["badge"]?.numberValue == 0 && aps?["sound"] == nil
            }
        }
        let ignored = simulator.ignoredByDevice()
        for request in ignored {
            say("  ignored by the device: \(request.ignoredByDevice ?? "?")")
        }
        return good && ignored.isEmpty
    }

    func say(_ line: String) {
        print(line)
    }
}
