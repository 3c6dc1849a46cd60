import ArgumentParser
import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer
@testable import pushrelay

/// A command's own `run()`, as `pushrelay` calls it: the console opened from `--config`, the change in the
/// configured store, and its audit record on the instance's `:cli` chain.
@Suite(.timeLimit(.minutes(1)))
struct AdminCommandRunTests {
    @Test func runOpensTheConfiguredStoreAndAuditChain() async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
            .appendingPathComponent("pushrelay-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("relay.conf").path
        try Data(
            """
            [store]
            url = "sqlite://relay.db"

            [audit]
            instance = "cli-test"

            [limits]
            burst = 250
            """.utf8
        ).write(to: URL(fileURLWithPath: config))

        let parsed = try PushRelayCommand.parseAsRoot(["tenant", "create", "acme", "--config", config])
        var command = try #require(parsed as? any AsyncParsableCommand)
        try await command.run()

        let store = try SQLiteStore(path: folder.appendingPathComponent("relay.db").path)
        let tenant = try #require(try await store.tenant(named: "acme"))
        #expect(tenant.limits.burst == 250)
        let records = try await store.auditRecords(chain: "cli-test:cli", after: 0, limit: 10).map(\.record)
        #expect(records.map(\.outcome) == ["tenant.create"])
        #expect(records.first?.actor == CLIAudit.actor)
    }
}
