import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The stores the operations tests run against: memory, and SQLite in a temporary file.
enum CLIStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqlite

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh, migrated store; the SQLite file lives in a folder removed afterwards.
    func withStore(_ body: (any PushStore) async throws -> Void) async throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let store: any PushStore
        switch self {
        case .memory: store = MemoryStore()
        case .sqlite: store = try SQLiteStore(path: folder.file("relay.db"))
        }
        try await store.migrate()
        try await body(store)
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
