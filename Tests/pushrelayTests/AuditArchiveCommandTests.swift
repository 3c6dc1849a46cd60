import ArgumentParser
import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import pushrelay

/// `pushrelay audit archive` and `audit verify --archive` as the command line runs them, on an SQLite store named by
/// `--config`.
@Suite(.timeLimit(.minutes(1)))
struct AuditArchiveCommandTests {
    /// A folder with `relay.conf` (an SQLite store, instance `archive-test`, and the signing key unless `signed` is
    /// false), removed by ``remove()``.
    struct Install {
        let folder: URL
        let key = AuditSigningKey.generate()

        init(signed: Bool = true) throws {
            folder = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
                .appendingPathComponent("pushrelay-archive-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data((key.base64 + "\n").utf8).write(to: folder.appendingPathComponent("audit.key"))
            let audit =
                signed ? "instance = \"archive-test\"\nsigning_key_file = \"audit.key\"" : "instance = \"archive-test\""
            try Data("[store]\nurl = \"sqlite://relay.db\"\n\n[audit]\n\(audit)\n".utf8)
                .write(to: folder.appendingPathComponent("relay.conf"))
        }

        var config: String { path("relay.conf") }

        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

        func store() throws -> SQLiteStore { try SQLiteStore(path: path("relay.db")) }

        func remove() { try? FileManager.default.removeItem(at: folder) }

        /// Runs `pushrelay` with `arguments` and `--config`.
        func run(_ arguments: [String]) async throws {
            let parsed = try PushRelayCommand.parseAsRoot(arguments + ["--config", config])
            var command = try #require(parsed as? any AsyncParsableCommand)
            try await command.run()
        }

        /// Writes `count` signed push records to chain "relay-1", one a minute, the last `daysAgo` days ago.
        func appendPushes(count: Int, daysAgo: Double) async throws {
            let store = try store()
            try await store.migrate()
            var chain = AuditChain(chain: "relay-1", head: try await store.auditHead(chain: "relay-1"))
            let end = Date().addingTimeInterval(-daysAgo * 86_400)
            let records = (0..<count).map { index in
                chain.append(
                    AuditEntry(
                        timeMillis: AuditTime.millis(end.addingTimeInterval(Double(index + 1 - count) * 60)),
                        event: .push, tenantID: "tenant-a", provider: "apns", outcome: "ok"
                    ).normalisedForStorage())
            }
            var batch = StoreBatch(audit: records)
            if let last = records.last {
                batch.checkpoints = [key.checkpoint(chain: "relay-1", seq: last.seq, link: last.link, time: Date())]
            }
            try await store.commit(batch)
        }
    }

    static let thirtyDaysAgo = AuditTime.iso8601(millis: AuditTime.millis(Date().addingTimeInterval(-30 * 86_400)))

    @Test func archiveThenVerifyTheArchiveWithTheLiveChain() async throws {
        let install = try Install()
        defer { install.remove() }
        try await install.appendPushes(count: 10, daysAgo: 40)
        try await install.appendPushes(count: 5, daysAgo: 1)
        let archive = install.path("audit-archive.jsonl")

        // A dry run changes nothing.
        try await install.run(["audit", "archive", "--before", Self.thirtyDaysAgo, "--out", archive, "--dry-run"])
        #expect(!FileManager.default.fileExists(atPath: archive))
        #expect(try await install.store().auditRecords(chain: "relay-1", after: 0, limit: 100).count == 15)

        try await install.run(["audit", "archive", "--before", Self.thirtyDaysAgo, "--out", archive])
        let store = try install.store()
        #expect(
            try await store.auditRecords(chain: "relay-1", after: 0, limit: 100).map(\.record.seq) == Array(11...15))
        #expect(try await store.auditAnchor(chain: "relay-1")?.seq == 10)
        // The archiving is on the record, in the command line's chain, with the file's hash.
        let recorded = try await store.auditRecords(chain: "archive-test:cli", after: 0, limit: 10).map(\.record)
        #expect(recorded.map(\.outcome) == ["audit.archive"])
        let file = try AuditArchiveFile.read(path: archive, publicKey: install.key.publicKey)
        #expect(recorded.first?.after?.objectValue?["sha256"] == .string(file.sha256))

        // The archive and the store verify together (the CLI chain is in the store only).
        try await install.run(["audit", "verify", "--archive", archive])

        // Never overwritten: a second run to the same file is refused and changes nothing.
        try await install.appendPushes(count: 1, daysAgo: 35)
        await #expect(throws: (any Error).self) {
            try await install.run(["audit", "archive", "--before", Self.thirtyDaysAgo, "--out", archive])
        }
        #expect(try AuditArchiveFile.read(path: archive, publicKey: install.key.publicKey).sha256 == file.sha256)

        // An edited archive is refused (exit status 1).
        var text = try String(contentsOfFile: archive, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"outcome\":\"ok\"", with: "\"outcome\":\"DeviceNotRegistered\"")
        let edited = install.path("edited.jsonl")
        try Data(text.utf8).write(to: URL(fileURLWithPath: edited))
        await #expect(throws: ExitCode(1)) {
            try await install.run(["audit", "verify", "--archive", edited])
        }
    }

    @Test func aSecondArchiveVerifiesAfterTheFirst() async throws {
        let install = try Install()
        defer { install.remove() }
        try await install.appendPushes(count: 4, daysAgo: 60)
        try await install.appendPushes(count: 3, daysAgo: 40)
        try await install.appendPushes(count: 2, daysAgo: 1)
        let first = install.path("first.jsonl")
        let second = install.path("second.jsonl")
        let fiftyDaysAgo = AuditTime.iso8601(millis: AuditTime.millis(Date().addingTimeInterval(-50 * 86_400)))
        try await install.run(["audit", "archive", "--before", fiftyDaysAgo, "--out", first])
        try await install.run(["audit", "archive", "--before", Self.thirtyDaysAgo, "--out", second, "--json"])
        #expect(try await install.store().auditAnchor(chain: "relay-1")?.seq == 7)

        try await install.run(["audit", "verify", "--archive", first, "--archive", second])
        // The second archive without the first still joins the store; the first without the second does not.
        try await install.run(["audit", "verify", "--archive", second])
        await #expect(throws: ExitCode(1)) {
            try await install.run(["audit", "verify", "--archive", first])
        }
    }

    @Test func withoutASigningKeyArchivingIsRefused() async throws {
        let install = try Install(signed: false)
        defer { install.remove() }
        try await install.appendPushes(count: 3, daysAgo: 40)
        let archive = install.path("audit-archive.jsonl")
        await #expect(throws: CLIError.self) {
            try await install.run(["audit", "archive", "--before", Self.thirtyDaysAgo, "--out", archive])
        }
        #expect(!FileManager.default.fileExists(atPath: archive))
        #expect(try await install.store().auditRecords(chain: "relay-1", after: 0, limit: 10).count == 3)
    }

    @Test func aDateInTheFutureIsRefused() throws {
        let tomorrow = AuditTime.iso8601(millis: AuditTime.millis(Date().addingTimeInterval(86_400)))
        #expect(throws: (any Error).self) {
            _ = try PushRelayCommand.parseAsRoot(["audit", "archive", "--before", tomorrow, "--out", "a.jsonl"])
        }
    }
}
