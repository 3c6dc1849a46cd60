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

/// The wiring: a relay built from a configuration file, as `pushrelay serve` builds it, is the relay the file
/// describes, and a push through it reaches the provider simulator and leaves its receipt in the file's store.
@Suite(.timeLimit(.minutes(1)))
struct RelayAssemblyTests {
    static let apnsToken = String(repeating: "a1", count: 32)
    static let fcmToken = "assembly-android:" + String(repeating: "APA91b_x", count: 12)
    static let expoToken = "ExponentPushToken[assembly-0001]"

    /// A `relay.conf` for the simulator: every provider, a relative SQLite path, and settings that differ from the
    /// defaults, so that each check below can only pass if the value came from this file.
    static func relayConf(
        simulator: ProviderSimulator,
        credentials: SimulatorCredentials,
        files: SimulatorCredentials.Files
    ) -> String {
        let endpoint = SimulatorCredentials.tomlString(simulator.baseURL)
        return """
            [server]
            trusted_proxies = ["10.0.0.0/8"]

            [store]
            url = "sqlite://data/relay.db"

            [upstream]
            ca_file = \(SimulatorCredentials.tomlString(simulator.caFilePath))
            max_connections = 3
            timeout_ms = 15000
            max_attempts = 2
            retry_window_seconds = 45
            max_attempts_after_timeout = 2

            [apns]
            team_id = \(SimulatorCredentials.tomlString(credentials.apnsTeamID))
            key_id = \(SimulatorCredentials.tomlString(credentials.apnsKeyID))
            key_file = \(SimulatorCredentials.tomlString(files.apnsKey))
            topic = \(SimulatorCredentials.tomlString(credentials.apnsBundleID))
            environment = "sandbox"
            endpoint = \(endpoint)
            sandbox_endpoint = \(endpoint)

            [fcm]
            service_account_file = \(SimulatorCredentials.tomlString(files.serviceAccount))
            endpoint = \(endpoint)

            [expo]
            endpoint = \(endpoint)
            receipt_delay_seconds = 120

            [limits]
            rate_per_second = 7
            burst = 21
            daily_quota = 5000
            per_device_per_minute = 9
            critical_reserve_per_hour = 40
            critical_per_device_per_minute = 4

            [receipts]
            ttl_hours = 48
            wait_ms = 20000

            [audit]
            instance = "assembly-test"

            """
    }

    @Test func aRelayBuiltFromAConfigurationFileIsTheOneItDescribesAndDeliversThroughIt() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("relay-assembly-\(UUID().uuidString)").path
        // The database's folder (the store refuses to invent one).
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
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

    private func check(
        simulator: ProviderSimulator,
        credentials: SimulatorCredentials,
        directory: String
    ) async throws {
        let files = try credentials.write(to: directory + "/keys", tokenURI: simulator.fcmTokenURI)
        let path = directory + "/relay.conf"
        try Self.relayConf(simulator: simulator, credentials: credentials, files: files)
            .write(toFile: path, atomically: true, encoding: .utf8)

        // What `serve` does: load the file (the environment left out, so that the test's own cannot interfere),
        // open the store, build the relay.
        let configuration = try RelayConfiguration.load(path: path, environment: [:])
        let store = try await RelayAssembly.openStore(configuration)
        let logger = Logger(label: "relay-assembly-test") { _ in SwiftLogNoOpLogHandler() }
        let assembly = try RelayAssembly.make(configuration: configuration, store: store, logger: logger)
        let relay = assembly.relay

        // The store: SQLite, at the file's path resolved against the file's folder.
        #expect(store is SQLiteStore)
        let databasePath = directory + "/data/relay.db"
        #expect(FileManager.default.fileExists(atPath: databasePath))

        // The providers: a sender and a client each, the clients' pools as `[upstream]` says.
        #expect(relay.configuredProviders == [.apns, .fcm, .expo])
        #expect(relay.senders[.apns] is APNsSender)
        #expect(relay.senders[.fcm] is FCMSender)
        #expect(relay.senders[.expo] is ExpoSender)
        // Each sender retries transient failures within `retry_window_seconds`.
        let windows = [
            (relay.senders[.apns] as? APNsSender)?.retries.policy.window,
            (relay.senders[.fcm] as? FCMSender)?.retries.policy.window,
            (relay.senders[.expo] as? ExpoSender)?.retries.policy.window,
        ]
        #expect(windows == Array(repeating: .seconds(45), count: 3))
        // …and sends a push again at most `max_attempts_after_timeout` times after attempts that were not answered.
        let afterTimeout = [
            (relay.senders[.apns] as? APNsSender)?.retries.maxAttemptsAfterTimeout,
            (relay.senders[.fcm] as? FCMSender)?.retries.maxAttemptsAfterTimeout,
            (relay.senders[.expo] as? ExpoSender)?.retries.maxAttemptsAfterTimeout,
        ]
        #expect(afterTimeout == [2, 2, 2])
        #expect(assembly.clients.map(\.provider).sorted { $0.rawValue < $1.rawValue } == [.apns, .expo, .fcm])
        #expect(assembly.clients.allSatisfy { $0.app == "default" })
        for entry in assembly.clients {
            let client = entry.client
            #expect(client.configuration.caFile == simulator.caFilePath, "\(entry.provider)")
            #expect(client.configuration.maxConnections == 3, "\(entry.provider)")
            #expect(client.configuration.requestTimeout == .milliseconds(15_000), "\(entry.provider)")
        }

        // The settings.
        #expect(relay.settings.waitDeadline == .milliseconds(20_000))
        #expect(relay.settings.receiptLifetime == 48 * 3600)
        #expect(relay.settings.trustedProxies == TrustedProxies(["10.0.0.0/8"]))
        #expect(
            relay.settings.tenantDefaults
                == RateLimits(
                    ratePerSecond: 7, burst: 21, dailyQuota: 5000, perDevicePerMinute: 9, criticalReservePerHour: 40)
        )
        #expect(relay.settings.criticalPerDevicePerMinute == 4)
        #expect(relay.commits.settings.chain == "assembly-test")
        #expect(assembly.expoReceipts.delay == .seconds(120))
        #expect(
            assembly.services.map { "\($0)" }
                == ["ClientShutdownService", "MaintenanceService", "ExpoReceiptService", "JournalService"]
        )
        // The delivery journal: this instance's, under a key made beside the database, readable by its owner only.
        #expect(relay.journal.instance == "assembly-test")
        // A journaled push is resumed within the retry loop's window, no longer.
        #expect(relay.journal.resumeWindow == .seconds(45))
        let keyPath = databasePath + ".journal-key"
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(relay.queue.capacity == 20_000)
        #expect(relay.queue.drainTimeout == .seconds(20))

        // One push per provider through the built relay, its services running as the application runs them.
        let tenant = Tenant(name: "acme", allowCriticalAlerts: true)
        try await store.createTenant(tenant)
        let key = TenantKeys.issue()
        try await store.createKey(TenantKeyRecord(id: key.id, tenantID: tenant.id, secretHash: key.secretHash))
        let group = ServiceGroup(
            configuration: .init(
                services: assembly.services + [relay.commits, relay.queue],
                gracefulShutdownSignals: [],
                logger: logger
            )
        )
        let ids = try await withThrowingTaskGroup(of: [String]?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            let identity = try await relay.authenticator.authenticate(key.key)
            let pushes = try Self.pushes([Self.apnsToken, Self.fcmToken, Self.expoToken])
            let result = try await relay.push(pushes, identity: identity, logger: logger)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result.tickets.map(\.id)
        }

        // The simulator took each, with the credentials and topic the file names.
        #expect(simulator.received(.apns).map(\.response.status) == [200])
        #expect(simulator.received(.fcm).map(\.response.status) == [200])
        #expect(simulator.received(.expoSend).map(\.response.status) == [200])

        // The receipts are in the file's database (read through a store of its own) and the audit records on the
        // file's chain. Expo's stays pending until its receipt is fetched, `receipt_delay_seconds` later.
        let reopened = try SQLiteStore(path: databasePath)
        let stored = try await reopened.receipts(ids: ids, tenantID: tenant.id)
        let receipts = ids.compactMap { id in stored.first { $0.id == id } }
        #expect(receipts.map(\.provider) == [.apns, .fcm, .expo])
        #expect(receipts.map(\.status) == [.ok, .ok, .pending])
        let audit = try await reopened.auditRecords(chain: "assembly-test", after: 0, limit: 10)
        #expect(audit.count == 3)
    }

    @Test func aStoreThatCannotBeOpenedIsAnErrorNamingStoreURL() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("relay-assembly-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = RelayConfiguration(store: .init(url: "sqlite://typo/relay.db", directory: directory))
        let missingError = await #expect(throws: RelayAssemblyError.self) {
            _ = try await RelayAssembly.openStore(missing)
        }
        #expect(missingError?.description.contains("typo of the SQLite database does not exist") == true)
        #expect(!FileManager.default.fileExists(atPath: directory + "/typo"), "no folder made for a typo")
        #expect(missing.store.folderProblem != nil, "check-config reports it too")

        // A new database is announced (createdFile) and readable by its owner only.
        let fresh = RelayConfiguration(store: .init(url: "sqlite://fresh.db", directory: directory))
        let store = try #require(try await RelayAssembly.openStore(fresh) as? SQLiteStore)
        #expect(store.createdFile)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/fresh.db")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let again = try #require(try await RelayAssembly.openStore(fresh) as? SQLiteStore)
        #expect(!again.createdFile, "an existing database is not new")

        // A file where the database's folder should be.
        try "not a folder".write(toFile: directory + "/data", atomically: true, encoding: .utf8)
        let unopenable = RelayConfiguration(store: .init(url: "sqlite://data/relay.db", directory: directory))
        let password = "s3cret-password"
        // Loading refuses such a URL; a configuration made in code can still carry one.
        let unknown = RelayConfiguration(store: .init(url: "mysql://u:\(password)@db/relay", directory: directory))
        for configuration in [unopenable, unknown] {
            let error = await #expect(throws: RelayAssemblyError.self) {
                _ = try await RelayAssembly.openStore(configuration)
            }
            #expect(error?.key == .storeURL)
            #expect(error?.description.hasPrefix("store.url: ") == true)
            #expect(error?.description.contains(password) == false)
        }
    }

    /// Native messages, one per token, as the APIs resolve them.
    static func pushes(_ tokens: [String]) throws -> [ResolvedPush] {
        try tokens.flatMap { token in
            var issues: [ValidationIssue] = []
            let json = JSONValue.object([
                "to": .string(token), "title": .string("Assembled"), "body": .string("through the wiring"),
            ])
            return try #require(PushMessage.parse(json, at: .root, issues: &issues), "\(issues)").pushes
        }
    }
}
