import Foundation
import RelayCore
import RelayStore
import RelayStorePostgres
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The stores the operations tests run against: memory, SQLite in a temporary file, and PostgreSQL when
/// `RELAY_TEST_POSTGRES_URL` names a database (``available``).
enum CLIStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let postgresURL: String? = {
        guard let url = ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"], !url.isEmpty else {
            return nil
        }
        return url
    }()

    /// The kinds that run on this machine.
    static var available: [CLIStoreKind] { allCases.filter { $0 != .postgres || postgresURL != nil } }

    /// Runs `body` with a fresh, migrated store; the SQLite file lives in a folder removed afterwards, a PostgreSQL
    /// store in a schema of its own, dropped afterwards.
    func withStore(_ body: (any PushStore) async throws -> Void) async throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let store: any PushStore
        switch self {
        case .memory: store = MemoryStore()
        case .sqlite: store = try SQLiteStore(path: folder.file("relay.db"))
        case .postgres:
            try await Self.withPostgresStore(body)
            return
        }
        try await store.migrate()
        try await body(store)
    }

    private static func withPostgresStore(_ body: (any PushStore) async throws -> Void) async throws {
        let url = try #require(postgresURL, "RELAY_TEST_POSTGRES_URL is not set")
        var configuration = try PostgresStoreConfiguration(url: url)
        configuration.schema =
            "pushrelay_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        configuration.maximumConnections = 2
        let store = PostgresStore(configuration: configuration)
        store.start()
        var failure: (any Error)?
        do {
            try await store.migrate()
            try await body(store)
        } catch {
            failure = error
        }
        try? await store.dropSchema()
        await store.shutdown()
        if let failure { throw failure }
    }
}

enum AuditFixtures {
    /// A fixed "now" for the fixtures, in whole milliseconds.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Appends one push record per time to `chain`, linked onto its stored head, optionally with a checkpoint at the
    /// end signed by `key`.
    @discardableResult
    static func appendPushes(
        to store: any PushStore,
        chain: String,
        times: [Date],
        tenantID: String = "tenant-a",
        signedBy key: AuditSigningKey? = nil
    ) async throws -> [AuditRecord] {
        var links = AuditChain(chain: chain, head: try await store.auditHead(chain: chain))
        let records = times.enumerated().map { index, time in
            links.append(
                AuditEntry(
                    timeMillis: AuditTime.millis(time), event: .push, tenantID: tenantID, keyID: "00112233aabbccdd",
                    provider: "apns",
                    tokenFingerprint: String(format: "%032x", index), critical: index % 2 == 0,
                    outcome: index % 3 == 0 ? "DeviceNotRegistered" : "ok", upstreamStatus: 200, attempts: 1,
                    latencyMillis: 12
                ).normalisedForStorage()
            )
        }
        var batch = StoreBatch(audit: records)
        if let key, let last = records.last {
            batch.checkpoints = [key.checkpoint(chain: chain, seq: last.seq, link: last.link, time: now)]
        }
        try await store.commit(batch)
        return records
    }

    /// `count` times, one a minute, ending `daysAgo` days before ``now``.
    static func times(count: Int, daysAgo: Double) -> [Date] {
        (0..<count).map { index in
            now.addingTimeInterval(-daysAgo * 86_400 - Double(count - index) * 60)
        }
    }
}
