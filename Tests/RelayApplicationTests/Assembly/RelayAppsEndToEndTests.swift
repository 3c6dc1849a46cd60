import Foundation
import Logging
import RelayCore
import RelayHTTP2
import RelayProviders
import RelaySimulator
import RelayStore
import ServiceLifecycle
import Testing

@testable import RelayApplication

/// Two apps on one relay, built from a configuration file as `pushrelay serve` builds it: the default app and `beta`
/// have different APNs keys and topics and different FCM projects, each app's upstream a simulator that knows only
/// that app's credentials. So a push that carried the other app's topic, provider token or project, or went to the
/// other app's upstream, would be refused or counted there.
@Suite(.timeLimit(.minutes(1)))
struct RelayAppsEndToEndTests {
    static let apnsDefault = String(repeating: "a1", count: 32)
    static let apnsBeta = String(repeating: "b2", count: 32)
    static let apnsSolo = String(repeating: "c3", count: 32)
    static let apnsRefused = String(repeating: "d4", count: 32)
    static let fcmDefault = "apps-android-default:" + String(repeating: "APA91b_x", count: 12)
    static let fcmBeta = "apps-android-beta:" + String(repeating: "APA91b_y", count: 12)
    static let expoBeta = "ExponentPushToken[apps-beta-0001]"

    /// The default app's credentials, and beta's: another key, bundle id, project and service account.
    static func credentials() throws -> (main: SimulatorCredentials, beta: SimulatorCredentials) {
        let main = try SimulatorCredentials()
        return (main, try SimulatorCredentials.beta())
    }

    static func relayConf(
        main: (simulator: ProviderSimulator, credentials: SimulatorCredentials, files: SimulatorCredentials.Files),
        beta: (simulator: ProviderSimulator, credentials: SimulatorCredentials, files: SimulatorCredentials.Files),
        caFile: String
    ) -> String {
        func string(_ value: String) -> String { SimulatorCredentials.tomlString(value) }
        return """
            [store]
            url = "sqlite://:memory:"

            [upstream]
            ca_file = \(string(caFile))

            [apns]
            team_id = \(string(main.credentials.apnsTeamID))
            key_id = \(string(main.credentials.apnsKeyID))
            key_file = \(string(main.files.apnsKey))
            topic = \(string(main.credentials.apnsBundleID))
            environment = "sandbox"
            sandbox_endpoint = \(string(main.simulator.baseURL))

            [fcm]
            service_account_file = \(string(main.files.serviceAccount))
            endpoint = \(string(main.simulator.baseURL))

            [expo]
            endpoint = \(string(main.simulator.baseURL))

            \(beta.credentials.appRelayConfiguration(app: "beta", files: beta.files, endpoint: beta.simulator.baseURL))
            [audit]
            instance = "apps-test"

            """
    }

    @Test func eachPushGoesWithItsAppsTopicKeyAndProjectAndAnAppNotAllowedSendsNothing() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("relay-apps-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (mainCredentials, betaCredentials) = try Self.credentials()
        let main = try await ProviderSimulator.start(configuration: mainCredentials.simulatorConfiguration())
        let beta: ProviderSimulator
        do {
            beta = try await ProviderSimulator.start(configuration: betaCredentials.simulatorConfiguration())
        } catch {
            try? await main.shutdown()
            throw error
        }
        do {
            let mainFiles = try mainCredentials.write(to: directory + "/main", tokenURI: main.fcmTokenURI)
            let betaFiles = try betaCredentials.write(to: directory + "/beta", tokenURI: beta.fcmTokenURI)
            // One `ca_file` trusts both simulators' CAs.
            let caFile = directory + "/ca.pem"
            let authorities = try [main.caFilePath, beta.caFilePath].map {
                try String(contentsOfFile: $0, encoding: .utf8)
            }
            try authorities.joined(separator: "\n").write(toFile: caFile, atomically: true, encoding: .utf8)
            let path = directory + "/relay.conf"
            try Self.relayConf(
                main: (main, mainCredentials, mainFiles), beta: (beta, betaCredentials, betaFiles), caFile: caFile
            ).write(toFile: path, atomically: true, encoding: .utf8)
            try await check(configurationPath: path, main: main, beta: beta)
        } catch {
            try? await main.shutdown()
            try? await beta.shutdown()
            throw error
        }
        try await main.shutdown()
        try await beta.shutdown()
    }

    private func check(configurationPath: String, main: ProviderSimulator, beta: ProviderSimulator) async throws {
        let configuration = try RelayConfiguration.load(path: configurationPath, environment: [:])
        #expect(configuration.appNames == ["default", "beta"])
        let store = try await RelayAssembly.openStore(configuration)
        let logger = Logger(label: "relay-apps-test") { _ in SwiftLogNoOpLogHandler() }
        let assembly = try RelayAssembly.make(configuration: configuration, store: store, logger: logger)
        let relay = assembly.relay
        // Each app and provider has its own client: nothing of one app travels on another's connection.
        let clients = assembly.clients.map { "\($0.app)/\($0.provider.rawValue)" }.sorted()
        #expect(clients == ["beta/apns", "beta/fcm", "default/apns", "default/expo", "default/fcm"])
        #expect(Set(assembly.clients.map { ObjectIdentifier($0.client) }).count == 5)
        #expect(assembly.appExpoReceipts.isEmpty, "beta has no Expo, so no receipt poller of its own")

        // acme may use both apps (default by default); solo only beta, which is its default.
        let acme = Tenant(name: "acme", apps: ["default", "beta"])
        let solo = Tenant(name: "solo", apps: ["beta"], defaultApp: "beta")
        var keys: [String: String] = [:]
        for tenant in [acme, solo] {
            try await store.createTenant(tenant)
            let key = TenantKeys.issue()
            try await store.createKey(TenantKeyRecord(id: key.id, tenantID: tenant.id, secretHash: key.secretHash))
            keys[tenant.name] = key.key
        }
        let group = ServiceGroup(
            configuration: .init(
                services: assembly.services + [relay.commits, relay.queue], gracefulShutdownSignals: [],
                logger: logger)
        )
        let (acmeResult, soloResult) = try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let acmePushes = try Self.pushes([
                (Self.apnsDefault, nil), (Self.apnsBeta, "beta"), (Self.fcmBeta, "beta"), (Self.fcmDefault, nil),
                (Self.expoBeta, "beta"),
            ])
            let acmeIdentity = try await relay.authenticator.authenticate(keys["acme"] ?? "")
            let acmeResult = try await relay.push(acmePushes, identity: acmeIdentity, logger: logger)
            let soloPushes = try Self.pushes([(Self.apnsSolo, nil), (Self.apnsRefused, "default")])
            let soloIdentity = try await relay.authenticator.authenticate(keys["solo"] ?? "")
            let soloResult = try await relay.push(soloPushes, identity: soloIdentity, logger: logger)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return (acmeResult, soloResult)
        }

        // The tickets: delivered where the app has the provider; beta has no Expo; solo may not use default.
        #expect(acmeResult.tickets.map(\.state.summary) == ["ok", "ok", "ok", "ok", "ProviderNotConfigured"])
        #expect(soloResult.tickets.map(\.state.summary) == ["ok", "AppNotAllowed"])

        // The default app's upstream got the default app's pushes, with its topic, provider token and project.
        let mainAPNs = main.received(.apns)
        #expect(mainAPNs.map(\.status) == [200])
        #expect(mainAPNs.map { $0.path.hasSuffix(Self.apnsDefault) } == [true])
        #expect(mainAPNs.map { $0.header("apns-topic") } == ["com.example.oncall"])
        let mainFCM = main.received(.fcm)
        #expect(mainFCM.map(\.status) == [200])
        #expect(mainFCM.map(\.path) == ["/v1/projects/demo-project/messages:send"])
        #expect(mainFCM.map { $0.bodyText.contains(Self.fcmDefault) } == [true])

        // Beta's upstream got beta's, solo's default included, and never the refused one.
        let betaAPNs = beta.received(.apns)
        #expect(betaAPNs.map(\.status) == [200, 200])
        #expect(
            Set(betaAPNs.compactMap { $0.path.split(separator: "/").last.map(String.init) }) == [
                Self.apnsBeta, Self.apnsSolo,
            ])
        #expect(betaAPNs.map { $0.header("apns-topic") } == ["com.example.oncall.beta", "com.example.oncall.beta"])
        #expect(betaAPNs.map { Self.keyID(ofBearer: $0.header("authorization")) } == ["BETAKEY002", "BETAKEY002"])
        #expect(mainAPNs.map { Self.keyID(ofBearer: $0.header("authorization")) } == ["DEMOKEY001"])
        let betaFCM = beta.received(.fcm)
        #expect(betaFCM.map(\.status) == [200])
        #expect(betaFCM.map(\.path) == ["/v1/projects/beta-project/messages:send"])
        #expect(betaFCM.map { $0.bodyText.contains(Self.fcmBeta) } == [true])
        #expect(beta.received(.expoSend).isEmpty && main.received(.expoSend).isEmpty)
        let everyAPNsPath = (mainAPNs + betaAPNs).map(\.path)
        #expect(!everyAPNsPath.contains { $0.hasSuffix(Self.apnsRefused) }, "nothing sent for an app not allowed")

        // The receipts name their app.
        let ids = acmeResult.tickets.map(\.id)
        let stored = try await store.receipts(ids: ids, tenantID: acme.id)
        let apps = ids.compactMap { id in stored.first { $0.id == id }?.app }
        #expect(apps == ["default", "beta", "beta", "default", "beta"])
        let soloStored = try await store.receipts(ids: soloResult.tickets.map(\.id), tenantID: solo.id)
        #expect(Set(soloStored.map(\.app)) == ["beta", "default"])

        // Usage by app, and the push audit records name a non-default app.
        let usage = try await store.usage(tenantID: acme.id, fromDay: "2000-01-01")
        let byApp = usage.map { "\($0.app)/\($0.provider.rawValue): \($0.counts.total)" }.sorted()
        #expect(byApp == ["beta/apns: 1", "beta/expo: 1", "beta/fcm: 1", "default/apns: 1", "default/fcm: 1"])
        #expect(usage.first { $0.app == "beta" && $0.provider == .expo }?.counts.rejected == 1)
        let audit = try await store.auditRecords(chain: "apps-test", after: 0, limit: 100)
        let pushApps = audit.filter { $0.record.event == .push }.map { $0.record.app ?? "(none)" }
        #expect(pushApps.sorted() == ["(none)", "(none)", "(none)", "beta", "beta", "beta", "beta"])
    }

    /// Each app with Expo gets a receipt poller of its own, which asks its endpoint with its access token for its
    /// own tickets: another app's token would not see them.
    @Test func eachAppWithExpoPollsItsOwnReceiptsWithItsOwnToken() async throws {
        let configuration = try RelayConfiguration.parse(
            toml: """
                [store]
                url = "sqlite://:memory:"
                [expo]
                access_token = "default-token"
                [apps.white-label.expo]
                access_token = "white-label-token"
                endpoint = "https://expo.white-label.example"
                [apps.beta.apns]
                """,
            directory: "/nonexistent",
            environment: [:]
        )
        let store = try await RelayAssembly.openStore(configuration)
        let logger = Logger(label: "relay-apps-test") { _ in SwiftLogNoOpLogHandler() }
        let assembly = try RelayAssembly.make(configuration: configuration, store: store, logger: logger)
        #expect(assembly.expoReceipts.configuration.accessToken == "default-token")
        #expect(Array(assembly.appExpoReceipts.keys) == ["white-label"])
        let whiteLabel = try #require(assembly.appExpoReceipts["white-label"])
        #expect(whiteLabel.configuration.accessToken == "white-label-token")
        #expect(whiteLabel.configuration.endpoint == "https://expo.white-label.example")
        #expect(assembly.services.filter { "\($0)" == "ExpoReceiptService" }.count == 2)
        #expect(assembly.relay.apps.providers == ["default": [.expo], "white-label": [.expo], "beta": []])
        for client in assembly.clients { await client.client.shutdown() }
    }

    /// Native messages, one per token, with an `app` where given, as the native API resolves them.
    static func pushes(_ tokens: [(token: String, app: String?)]) throws -> [ResolvedPush] {
        try tokens.flatMap { token, app in
            var issues: [ValidationIssue] = []
            var fields: [String: JSONValue] = ["to": .string(token), "title": .string("Apps"), "body": .string("x")]
            if let app { fields["app"] = .string(app) }
            return try #require(PushMessage.parse(.object(fields), at: .root, issues: &issues), "\(issues)").pushes
        }
    }

    /// The `kid` of an APNs provider token (`bearer <JWT>`).
    static func keyID(ofBearer authorization: String?) -> String? {
        guard let token = authorization?.split(separator: " ").last,
            let header = token.split(separator: ".").first
        else { return nil }
        var base64 = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            case .object(let fields)? = JSONValue.decode(Array(data))
        else { return nil }
        return fields["kid"]?.stringValue
    }
}

extension Ticket.State {
    /// `ok`, `pending`, or the error code.
    fileprivate var summary: String {
        switch self {
        case .ok: "ok"
        case .pending: "pending"
        case .unrecorded: Ticket.unrecordedCode
        case .error(let code, _, _, _): code.rawValue
        }
    }
}
