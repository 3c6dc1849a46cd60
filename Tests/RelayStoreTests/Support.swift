import Foundation
import RelayCore
import RelayStore
import RelayStorePostgres
import Testing

/// The stores the conformance suite runs against: always memory and SQLite; PostgreSQL too when
/// `RELAY_TEST_POSTGRES_URL` names a database (`scripts/test.sh` starts one and sets it).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqliteFile
    case sqliteInMemory
    case postgres

    var testDescription: String { rawValue }

    /// Every store the suite runs against on this machine.
    static var all: [StoreKind] {
        allCases.filter { $0 != .postgres || PostgresTestDatabase.url != nil }
    }

    /// Runs `body` with a fresh, migrated store; a file store lives in a temporary folder removed afterwards, a
    /// PostgreSQL store in a schema of its own, dropped afterwards.
    func withStore(_ body: (any PushStore) async throws -> Void) async throws {
        if self == .postgres {
            try await PostgresTestDatabase.withStore { try await body($0) }
            return
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await body(try makeStore(in: folder))
    }

    private func makeStore(in folder: TemporaryFolder) async throws -> any PushStore {
        let store: any PushStore
        switch self {
        case .memory: store = MemoryStore()
        case .sqliteFile: store = try SQLiteStore(path: folder.path("relay.db"))
        case .sqliteInMemory: store = try SQLiteStore(path: ":memory:")
        case .postgres: throw StoreError.unavailable("PostgreSQL stores are made by PostgresTestDatabase")
        }
        try await store.migrate()
        return store
    }
}

/// The PostgreSQL database of `RELAY_TEST_POSTGRES_URL`, in which every test works in a schema of its own.
enum PostgresTestDatabase {
    static let url: String? = {
        guard let url = ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"], !url.isEmpty else {
            return nil
        }
        return url
    }()

    /// Whether PostgreSQL tests run here.
    static var isAvailable: Bool { url != nil }

    /// Stores open at once, each with at most ``connectionsPerStore`` connections: tests run in parallel, and the
    /// server's default `max_connections` is 100.
    private static let openStores = AsyncSemaphore(limit: 8)
    private static let connectionsPerStore = 3

    /// A configuration for a new, uniquely named schema.
    static func configuration(schema: String = uniqueSchema()) throws -> PostgresStoreConfiguration {
        guard let url else { throw StoreError.unavailable("RELAY_TEST_POSTGRES_URL is not set") }
        var configuration = try PostgresStoreConfiguration(url: url)
        configuration.schema = schema
        configuration.maximumConnections = connectionsPerStore
        return configuration
    }

    static func uniqueSchema() -> String {
        "pushrelay_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// Runs `body` with a migrated store in a fresh schema, then drops the schema and closes the store.
    static func withStore(_ body: (PostgresStore) async throws -> Void) async throws {
        try await withStores(count: 1) { stores in
            guard let store = stores.first else { return }
            try await body(store)
        }
    }

    /// Runs `body` with `count` stores ("relays") on one fresh schema, the first one migrated.
    static func withStores(count: Int, _ body: ([PostgresStore]) async throws -> Void) async throws {
        let configuration = try configuration()
        await openStores.wait()
        let stores = (0..<count).map { _ in PostgresStore(configuration: configuration) }
        for store in stores { store.start() }
        let result: Result<Void, any Error>
        do {
            if let first = stores.first { try await first.migrate() }
            try await body(stores)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        try? await stores.first?.dropSchema()
        for store in stores { await store.shutdown() }
        await openStores.signal()
        try result.get()
    }
}

/// Lets at most `limit` callers past ``wait()`` until they ``signal()``.
actor AsyncSemaphore {
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { available = limit }

    func wait() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func signal() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().resume()
        }
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
    enum Kind: Equatable { case duplicate, notFound, unavailable, receiptsAlreadyFinal }

    var kind: Kind {
        switch self {
        case .duplicate: .duplicate
        case .notFound: .notFound
        case .unavailable: .unavailable
        case .receiptsAlreadyFinal: .receiptsAlreadyFinal
        }
    }

    var message: String {
        switch self {
        case .duplicate(let message), .notFound(let message), .unavailable(let message): message
        case .receiptsAlreadyFinal(let ids): "receipts no longer pending: \(ids.joined(separator: ", "))"
        }
    }
}

extension PushStore {
    /// What the relay writes when Expo's receipt concludes a notification (RelayApplication's `NotificationRecord`
    /// through the commit queue), in one commit: the receipt closes, its usage moves from accepted to the outcome's
    /// column. `false` when no receipt is pending for the ticket, or another writer closed it first.
    @discardableResult
    func closeExpoReceipt(ticketID: String, outcome: DeliveryOutcome) async throws -> Bool {
        guard let receipt = try await pendingReceipt(expoTicketID: ticketID) else { return false }
        var batch = StoreBatch(receiptCloses: [ReceiptUpdate(outcome: outcome, id: receipt.id, at: Date())])
        batch.count(
            .acceptedEnded(outcome),
            for: UsageKey(tenantID: receipt.tenantID, date: receipt.createdAt, provider: .expo)
        )
        do {
            try await commit(batch)
            return true
        } catch StoreError.receiptsAlreadyFinal {
            return false
        }
    }
}
