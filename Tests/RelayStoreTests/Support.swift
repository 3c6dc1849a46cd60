import Foundation
import RelayCore
import RelayStore
import Testing

/// The stores the conformance suite runs against. PostgreSQL joins here (enabled when `POSTGRES_HOST` is set) once
/// `RelayStorePostgres` has its test target.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqliteFile
    case sqliteInMemory

    var testDescription: String { rawValue }

    /// Every store the suite runs against on this machine.
    static var all: [StoreKind] { allCases }

    /// Runs `body` with a fresh, migrated store; a file store lives in a temporary folder removed afterwards.
    func withStore(_ body: (any PushStore) async throws -> Void) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await body(try makeStore(in: folder))
    }

    private func makeStore(in folder: TemporaryFolder) async throws -> any PushStore {
        let store: any PushStore =
            switch self {
            case .memory: MemoryStore()
            case .sqliteFile: try SQLiteStore(path: folder.path("relay.db"))
            case .sqliteInMemory: try SQLiteStore(path: ":memory:")
            }
        try await store.migrate()
        return store
    }
}

/// A uniquely named folder under the system's temporary directory.
struct TemporaryFolder: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pushrelay-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `relativePath` inside the folder.
    func path(_ relativePath: String) -> String { url.appendingPathComponent(relativePath).path }

    func fileExists(_ relativePath: String) -> Bool { FileManager.default.fileExists(atPath: path(relativePath)) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Values the tests store. Dates are whole seconds, which every store keeps exactly (SQLite keeps UNIX seconds as
/// a `REAL`, so arbitrary fractions come back within a microsecond, not bit for bit).
enum Fixture {
    static let t0 = Date(timeIntervalSince1970: 1_750_000_000)

    static func date(_ seconds: Int) -> Date { t0.addingTimeInterval(TimeInterval(seconds)) }

    static func tenant(_ name: String, id: String? = nil, createdAt: Date = t0) -> Tenant {
        Tenant(id: id ?? "tenant-\(name)", name: name, createdAt: createdAt)
    }

    static func key(_ id: String, tenantID: String, createdAt: Date = t0) -> TenantKeyRecord {
        TenantKeyRecord(id: id, tenantID: tenantID, secretHash: Array(id.utf8) + [0, 255], createdAt: createdAt)
    }

    static func receipt(
        _ id: String,
        tenantID: String = "tenant-a",
        provider: Provider = .apns,
        status: ReceiptStatus = .pending,
        expoTicketID: String? = nil,
        createdAt: Date = t0,
        expiresAt: Date = date(86_400)
    ) -> Receipt {
        Receipt(
            id: id,
            tenantID: tenantID,
            keyID: "key-\(tenantID)",
            provider: provider,
            tokenFingerprint: "fp-\(id)",
            isCritical: false,
            status: status,
            expoTicketID: expoTicketID,
            createdAt: createdAt,
            updatedAt: createdAt,
            expiresAt: expiresAt
        )
    }
}

extension StoreError {
    /// The case without its message, which differs between stores.
    enum Kind: Equatable { case duplicate, notFound, unavailable }

    var kind: Kind {
        switch self {
        case .duplicate: .duplicate
        case .notFound: .notFound
        case .unavailable: .unavailable
        }
    }

    var message: String {
        switch self {
        case .duplicate(let message), .notFound(let message), .unavailable(let message): message
        }
    }
}
