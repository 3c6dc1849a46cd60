import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RelayCore
import RelaySimulator
import RelayStore
import Testing

@testable import RelayApplication

#if canImport(Glibc)
import Glibc
#endif

/// `pushrelay serve` killed with SIGKILL while its pushes are in flight, and started again: every push it answered
/// `pending` ends with a final receipt, re-sent to the upstream with the same `apns-id`, and the database never held
/// a token or a title. A real process (the executable this test run built), on loopback, against the simulator.
@Suite(.timeLimit(.minutes(1)))
struct CrashRecoveryProcessTests {
    static let title = "Quokka-vermilion-outage-4417"
    static let pushes = 8

    @Test func everyPendingPushIsFinalAfterKillNineAndARestart() async throws {
        let executable = try #require(
            RelayProcess.executableBesideThisOne, "pushrelay is built with the tests (swift build --build-tests)")
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let credentials = try SimulatorCredentials()
        // The upstream of the first run answers far later than the relay waits (100 ms) or the test lasts: every push
        // is answered pending, its send still on the wire when the relay is killed. The second run's answers at once.
        var slowConfiguration = credentials.simulatorConfiguration()
        slowConfiguration.latency = .seconds(600)
        let slow = try await ProviderSimulator.start(configuration: slowConfiguration)
        let fast = try await ProviderSimulator.start(configuration: credentials.simulatorConfiguration())
        defer {
            Task {
                try? await slow.shutdown()
                try? await fast.shutdown()
            }
        }
        let files = try credentials.write(to: folder.file("keys"), tokenURI: slow.fcmTokenURI)
        let port = try RelayProcess.freePort()
        let configPath = folder.file("relay.conf")
        try folder.write(
            "relay.conf", Self.relayConf(simulator: slow, credentials: credentials, files: files, port: port))
        let databasePath = folder.file("relay.db")

        // A tenant and its key, written to the database before the relay starts.
        let setup = try SQLiteStore(path: databasePath)
        try await setup.migrate()
        let tenant = Tenant(name: "acme", limits: RateLimits(ratePerSecond: 100, burst: 200))
        try await setup.createTenant(tenant)
        let issued = TenantKeys.issue()
        try await setup.createKey(TenantKeyRecord(id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash))
        let tokens = (0..<Self.pushes).map { String(format: "%02x", $0) + String(repeating: "e7", count: 31) }

        // First run: every push answered pending, then SIGKILL.
        let first = try RelayProcess(executable: executable, config: configPath)
        let ids: [String]
        do {
            try await first.waitUntilListening()
            ids = try await Self.push(tokens, key: issued.key, port: port)
            first.kill(SIGKILL)
            #expect(await first.exitStatus() == SIGKILL)
        } catch {
            first.kill(SIGKILL)
            throw error
        }
        let pendingAfterCrash = try await setup.receipts(ids: ids, tenantID: tenant.id)
        #expect(pendingAfterCrash.count == Self.pushes)
        #expect(pendingAfterCrash.allSatisfy { $0.status == .pending })
        #expect(try await setup.journalStatistics().entries == Self.pushes)
        // What the crash left on disk: neither a device token nor the title, in the database or its WAL.
        var bytes: [UInt8] = []
        for file in [databasePath, databasePath + "-wal"] {
            bytes += (try? Data(contentsOf: URL(fileURLWithPath: file))).map(Array.init) ?? []
        }
        for token in tokens { #expect(!bytes.windowsContain(Array(token.utf8)), "no device token in the store") }
        #expect(!bytes.windowsContain(Array(Self.title.utf8)), "no content in the store")
        // Sent before the crash (the last push was answered 100 ms after its send began, the first ones long after):
        // in flight, their outcome unknown to the relay.
        let sentBeforeCrash = slow.received(.apns).compactMap { $0.header("apns-id") }
        #expect(!sentBeforeCrash.isEmpty)
        #expect(Set(sentBeforeCrash).isSubset(of: Set(ids)), "the apns-id of each push is its receipt id")

        // Second run, its upstream the fast one: it resumes the journal before listening; SIGTERM then drains it, and
        // it exits.
        try folder.write(
            "relay.conf", Self.relayConf(simulator: fast, credentials: credentials, files: files, port: port))
        let second = try RelayProcess(executable: executable, config: configPath)
        do {
            try await second.waitUntilListening()
            second.kill(SIGTERM)
            #expect(await second.exitStatus() == 0)
        } catch {
            second.kill(SIGKILL)
            throw error
        }

        // Every receipt answered pending is final, each with one audit record that says it was resumed.
        let receipts = try await setup.receipts(ids: ids, tenantID: tenant.id)
        #expect(receipts.map(\.status) == Array(repeating: .ok, count: Self.pushes))
        #expect(try await setup.journalStatistics().entries == 0)
        let records = try await setup.auditRecords(chain: "crash-test", after: 0, limit: 100).map(\.record)
        let resumed = records.filter { $0.detail?.hasPrefix("resumed after a restart") == true }
        #expect(resumed.count == Self.pushes)
        // Each was sent once more, with the apns-id of its first send (its receipt id).
        let resent = fast.received(.apns).compactMap { $0.header("apns-id") }
        #expect(resent.sorted() == ids.sorted())
        try await slow.shutdown()
        try await fast.shutdown()
    }

    /// Sends one push per token (a request each), and returns their receipt ids; each must be answered pending.
    static func push(_ tokens: [String], key: String, port: Int) async throws -> [String] {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            var ids: [String] = []
            for token in tokens {
                let body = #"{"messages":[{"to":"\#(token)","title":"\#(title)","body":"db-1 down"}]}"#
                let response = try await client.post(
                    "/v1/push",
                    headers: [.authorization: "Bearer \(key)", .contentType: "application/json"],
                    body: ByteBuffer(string: body)
                )
                let ticket = response.body.flatMap { JSONValue.decode($0.readableBytesView) }?.objectValue?["data"]
                guard response.head.status == .ok, case .array(let tickets)? = ticket,
                    let first = tickets.first?.objectValue, first["status"] == .string("pending"),
                    let id = first["id"]?.stringValue
                else {
                    throw RelayProcess.Failure("push not answered pending: \(response.head.status)")
                }
                ids.append(id)
            }
            return ids
        }
    }

    static func relayConf(
        simulator: ProviderSimulator, credentials: SimulatorCredentials, files: SimulatorCredentials.Files, port: Int
    ) -> String {
        let endpoint = SimulatorCredentials.tomlString(simulator.baseURL)
        return """
            [server]
            listen = "127.0.0.1:\(port)"
            drain_seconds = 30

            [store]
            url = "sqlite://relay.db"

            [upstream]
            ca_file = \(SimulatorCredentials.tomlString(simulator.caFilePath))

            [apns]
            team_id = \(SimulatorCredentials.tomlString(credentials.apnsTeamID))
            key_id = \(SimulatorCredentials.tomlString(credentials.apnsKeyID))
            key_file = \(SimulatorCredentials.tomlString(files.apnsKey))
            topic = \(SimulatorCredentials.tomlString(credentials.apnsBundleID))
            environment = "sandbox"
            endpoint = \(endpoint)
            sandbox_endpoint = \(endpoint)

            [expo]
            endpoint = \(endpoint)

            [receipts]
            wait_ms = 100

            [audit]
            instance = "crash-test"

            [logging]
            level = "info"

            """
    }
}
