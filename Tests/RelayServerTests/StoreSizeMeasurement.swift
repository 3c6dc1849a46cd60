import Foundation
import RelayCore
import RelayProviders
import RelayStore
import RelayStorePostgres
import Testing

@testable import RelayApplication

/// How many notifications ``StoreSizeMeasurement`` writes: `RELAY_MEASURE_STORE_SIZE`, else it does not run.
let measuredNotifications: Int? = ProcessInfo.processInfo.environment["RELAY_MEASURE_STORE_SIZE"].flatMap { Int($0) }

/// The measurement behind operators.md's "Sizing the store": bytes per receipt, usage row and audit record on SQLite
/// and on PostgreSQL. Not a test; it runs only when `RELAY_MEASURE_STORE_SIZE` names how many notifications to write:
///
///     RELAY_MEASURE_STORE_SIZE=50000 RELAY_TEST_POSTGRES_URL="$(scripts/postgres.sh)" \
///         swift test --filter StoreSizeMeasurement
///
/// Each notification is written as a relay writes a delivered APNs push (``NotificationRecord``: its final receipt,
/// its usage count and its audit record, chained, in group commits of 100), for 200 tenants over 5 days and two
/// providers, so usage has rows to measure. Sizes are read from the databases themselves: SQLite's `dbstat` (every
/// page of a table and its indexes, after `VACUUM`), PostgreSQL's `pg_total_relation_size` (table, indexes and
/// TOAST, after `VACUUM FULL`), each through its command-line client (`sqlite3`, `psql`); and an archive file's
/// size (the export format) of the audit records.
@Suite(.enabled(if: measuredNotifications != nil), .timeLimit(.minutes(10)))
struct StoreSizeMeasurement {
    static var count: Int? { measuredNotifications }
    static let tables = ["receipts", "audit_records", "usage_daily"]

    @Test func sqlite() async throws {
        let count = try #require(Self.count)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = folder.file("relay.db")
        let store = try SQLiteStore(path: path)
        try await Self.fill(store, count: count)
        // What the same records take in an archive (or export) file, one JSON line each.
        let archive = folder.file("archive.jsonl")
        let writer = try LineFileWriter(path: archive, replacing: false)
        let key = AuditSigningKey.generate()
        _ = try await AuditExport(store: store, since: .distantPast, until: nil, signingKey: key)
            .write(to: writer.write)
        try writer.finish()
        let archived = try FileManager.default.attributesOfItem(atPath: archive)[.size] as? Int ?? 0
        let output = try Self.run(
            "sqlite3",
            [
                path, "PRAGMA wal_checkpoint(TRUNCATE);", "VACUUM;",
                "SELECT m.tbl_name, SUM(d.pgsize) FROM dbstat d JOIN sqlite_master m ON d.name = m.name "
                    + "GROUP BY m.tbl_name;",
                "SELECT 'receipts', COUNT(*) FROM receipts UNION ALL SELECT 'audit_records', COUNT(*) FROM "
                    + "audit_records UNION ALL SELECT 'usage_daily', COUNT(*) FROM usage_daily;",
            ])
        let file = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        Self.report(
            "SQLite", output,
            extra: "file \(file) bytes, \(file / count) bytes per notification; an archive of the audit records "
                + "\(archived) bytes, \(archived / count) bytes per record")
    }

    @Test(.enabled(if: CLIStoreKind.postgresURL != nil)) func postgres() async throws {
        let count = try #require(Self.count)
        let url = try #require(CLIStoreKind.postgresURL)
        var configuration = try PostgresStoreConfiguration(url: url)
        let schema = "pushrelay_size_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        configuration.schema = schema
        configuration.maximumConnections = 2
        let store = PostgresStore(configuration: configuration)
        store.start()
        var failure: (any Error)?
        do {
            try await store.migrate()
            try await Self.fill(store, count: count)
            var arguments = [url, "-At", "-F", "|"]
            for table in Self.tables { arguments += ["-c", "VACUUM FULL ANALYZE \(schema).\(table)"] }
            arguments += [
                "-c",
                Self.tables.map {
                    "SELECT '\($0)', pg_total_relation_size('\(schema).\($0)') UNION ALL SELECT '\($0)', "
                        + "COUNT(*) FROM \(schema).\($0)"
                }.joined(separator: " UNION ALL "),
            ]
            Self.report("PostgreSQL", try Self.run("psql", arguments), extra: nil)
        } catch {
            failure = error
        }
        try? await store.dropSchema()
        await store.shutdown()
        if let failure { throw failure }
    }

    /// Writes `count` delivered APNs and FCM pushes as the relay does.
    static func fill(_ store: any PushStore, count: Int) async throws {
        try await store.migrate()
        let tenants = (0..<200).map { _ in UUID().uuidString.lowercased() }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var chain = AuditChain(chain: "relay-1", head: nil)
        for first in stride(from: 0, to: count, by: 100) {
            var writes = RecordWrites()
            for index in first..<min(count, first + 100) {
                let provider: Provider = index / 7 % 2 == 0 ? .apns : .fcm
                let now = start.addingTimeInterval(Double(index / 200 % 5) * 86_400 + Double(index) / 100)
                let id = UUID().uuidString.lowercased()
                let record = NotificationRecord(
                    receipt: Receipt(
                        id: id, tenantID: tenants[index % tenants.count], keyID: String(format: "%016x", index % 997),
                        provider: provider, tokenFingerprint: String(format: "%032x", index * 7_919),
                        isCritical: index % 10 == 0, status: .pending, createdAt: now, updatedAt: now,
                        expiresAt: now.addingTimeInterval(86_400)),
                    tenantName: "tenant", requestID: String(UUID().uuidString.prefix(18)), client: "203.0.113.7")
                let messageID = provider == .apns ? id.uppercased() : "projects/pushrelay-demo/messages/0:\(index)"
                record.record(
                    .final(.delivered(providerMessageID: messageID)),
                    report: DeliveryReport(
                        outcome: .delivered(providerMessageID: messageID), attempts: 1, upstreamStatus: 200,
                        latency: .milliseconds(41)),
                    at: now.addingTimeInterval(0.041), into: &writes)
            }
            writes.batch.audit = writes.audit.map { chain.append($0.normalisedForStorage()) }
            try await store.commit(writes.batch)
        }
    }

    static func report(_ name: String, _ output: String, extra: String?) {
        var sizes: [String: Int] = [:]
        var rows: [String: Int] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: "|").map(String.init)
            guard fields.count == 2, Self.tables.contains(fields[0]), let value = Int(fields[1]) else { continue }
            // Each table's size comes first, then its row count.
            if sizes[fields[0]] == nil { sizes[fields[0]] = value } else { rows[fields[0]] = value }
        }
        var lines = ["\(name), \(count ?? 0) notifications:"]
        for table in Self.tables {
            let size = sizes[table] ?? 0
            let number = max(1, rows[table] ?? 1)
            lines.append("  \(table): \(size) bytes, \(number) rows, \(size / number) bytes per row")
        }
        if let extra { lines.append("  " + extra) }
        print(lines.joined(separator: "\n"))
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(tool) failed")
        return String(decoding: data, as: UTF8.self)
    }
}
