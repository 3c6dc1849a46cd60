package import Foundation
import GRDB
import RelayCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The embedded default store: one SQLite file (or memory), through GRDB.
///
/// ### Overview
/// A file store opens a GRDB `DatabasePool`: WAL journal, one writer connection and several readers, so lookups
/// (`key(id:)`, `receipts(ids:tenantID:)`) never wait behind the receipt writes of other requests. `":memory:"` opens
/// a `DatabaseQueue` (one connection; every in-memory database is private to its connection). Schema changes live in
/// ``migrate()`` (see `SQLiteStore+Migrations.swift`); nothing is created before it runs.
///
/// ### Implementation
/// - Every method is one GRDB access: one `read`, or one `write` (a transaction), awaited without blocking the
///   cooperative pool. GRDB serialises writes and makes the type `Sendable`.
/// - The hot paths (``commit(_:)``, ``key(id:)``) run cached prepared statements, once per row inside a single
///   transaction: SQLite executes in-process, so a prepared statement per row costs microseconds, and the
///   transaction means one commit (one WAL append) per call.
/// - Dates are stored as UNIX seconds (`REAL`), so SQL can compare them and `sqlite3` can show them with
///   `datetime(col, 'unixepoch')`. The round trip keeps about a microsecond; whole seconds come back exactly.
/// - The WAL runs with `synchronous = NORMAL`: a power cut may lose the last commits but never corrupts the file,
///   and a relay request does not wait for an fsync per commit.
/// - The commit that grows the WAL past ``checkpointPages`` copies it back into the file (a checkpoint, with two
///   fsyncs), and commits queued behind it wait. SQLite's default of 1,000 pages made those waits the relay's
///   slowest percent of requests at 1,000 a second; smaller, more frequent checkpoints are shorter waits
///   (Docs/benchmarks.md has the measurements, bigger thresholds included: far worse).
package final class SQLiteStore: PushStore {
    /// The pool for a file, the queue for memory.
    let writer: any DatabaseWriter
    /// Whether opening created the database file (the relay announces a new database: a wrong path shows at once).
    package let createdFile: Bool

    /// The WAL size, in pages (4 KiB), at which a commit checkpoints.
    package static let checkpointPages = 250
    /// The fingerprint key never changes once made, so it is read once.
    private let cachedFingerprintKey = Mutex<[UInt8]?>(nil)

    /// How long a write waits for another process (such as `pushrelay tenant create` beside a running server)
    /// to release the database before it fails with `SQLITE_BUSY`.
    private static let busyTimeout: TimeInterval = 5

    /// The path that selects an in-memory database.
    package static let memoryPath = ":memory:"

    /// Opens (or creates) the database at `path`; the schema comes with ``migrate()``.
    ///
    /// - Parameter path: A file path, whose parent folder is created if missing, or `":memory:"`.
    /// - Throws: ``StoreError/unavailable(_:)`` when the folder or the file cannot be opened.
    package init(path: String) throws {
        var configuration = Configuration()
        configuration.label = "PushRelay.SQLiteStore"
        configuration.busyMode = .timeout(Self.busyTimeout)
        configuration.prepareDatabase { db in
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.checkpointPages)")
            }
        }
        if path == Self.memoryPath {
            createdFile = false
            do {
                writer = try DatabaseQueue(configuration: configuration)
            } catch {
                throw StoreError.unavailable("cannot open an in-memory SQLite database: \(error)")
            }
            return
        }
        guard !path.isEmpty else { throw StoreError.unavailable("the SQLite database path is empty") }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError.unavailable(
                "cannot create the folder \(folder.path) for the SQLite database: \(error.localizedDescription)"
            )
        }
        // A new database is created here, readable by its owner only: it holds key hashes and the audit log. SQLite
        // gives its -wal and -shm files the database file's mode. An empty file is a valid new database to SQLite.
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        createdFile = descriptor >= 0
        if descriptor >= 0 { Glibc.close(descriptor) }
        do {
            writer = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw StoreError.unavailable("cannot open the SQLite database at \(path): \(error)")
        }
    }

    /// Opens the store a configuration names.
    ///
    /// - Parameters:
    ///   - url: `sqlite://PATH`: an absolute path (`sqlite:///var/lib/pushrelay/relay.db`), a relative one
    ///     (`sqlite://data/relay.db`), or `sqlite://:memory:`.
    ///   - directory: What relative paths resolve against (the configuration file's folder); `nil` leaves them
    ///     relative to the working directory.
    /// - Throws: ``StoreError/unavailable(_:)`` for any other URL. The message names the scheme at most, never the
    ///   URL: a database URL may carry a password.
    package static func open(url: String, relativeTo directory: String?) throws -> SQLiteStore {
        try SQLiteStore(path: path(fromURL: url, relativeTo: directory))
    }

    /// The database path a `sqlite://` URL names; see ``open(url:relativeTo:)``.
    static func path(fromURL url: String, relativeTo directory: String?) throws -> String {
        guard let separator = url.range(of: "://") else {
            throw StoreError.unavailable("the store URL is not a URL; expected sqlite://PATH")
        }
        let scheme = url[..<separator.lowerBound]
        let isSchemeLike =
            !scheme.isEmpty && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        guard isSchemeLike else {
            throw StoreError.unavailable("the store URL has no scheme; expected sqlite://PATH")
        }
        guard scheme.lowercased() == "sqlite" else {
            throw StoreError.unavailable(
                "unsupported store URL scheme \"\(scheme)\"; this store opens sqlite://PATH"
            )
        }
        let path = String(url[separator.upperBound...])
        if path.isEmpty { throw StoreError.unavailable("the sqlite:// store URL has no path") }
        if path == memoryPath || path.hasPrefix("/") { return path }
        guard let directory else { return path }
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        return URL(fileURLWithPath: path, relativeTo: base).standardizedFileURL.path
    }

    package func migrate() async throws {
        let migrator = Self.migrator
        let writer = self.writer
        // GRDB's `migrate(_:)` blocks its caller; `asyncMigrate` runs on the writer's own queue instead.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            migrator.asyncMigrate(writer) { result in
                continuation.resume(with: result.map { _ in () })
            }
        }
    }

    package func ping() async throws {
        try await writer.read { db in try db.execute(sql: "SELECT 1") }
    }

    // MARK: - Tenants

    private static let tenantColumns = """
        id, name, rate_per_second, burst, daily_quota, per_device_per_minute, allow_critical_alerts, disabled, \
        created_at, allowed_providers, critical_channel, note, deleted_at, apps, default_app, \
        critical_reserve_per_hour
        """

    package func createTenant(_ tenant: Tenant) async throws {
        try await writer.write { db in
            // Checked first so that the error names the name (the transaction is IMMEDIATE, so nothing slips in
            // between); the UNIQUE constraint still backs it.
            let nameTaken = try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM tenants WHERE name = ?)",
                arguments: [tenant.name]
            )
            if nameTaken == true { throw StoreError.duplicate("tenant \(tenant.name)") }
            do {
                try db.execute(
                    sql:
                        "INSERT INTO tenants (\(Self.tenantColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    arguments: [
                        tenant.id, tenant.name, tenant.limits.ratePerSecond, tenant.limits.burst,
                        tenant.limits.dailyQuota, tenant.limits.perDevicePerMinute, tenant.allowCriticalAlerts,
                        tenant.disabled, tenant.createdAt.unixSeconds, tenant.allowedProvidersColumn,
                        tenant.criticalChannel, tenant.note, tenant.deletedAt?.unixSeconds, tenant.appsColumn,
                        tenant.defaultApp, tenant.limits.criticalReservePerHour,
                    ]
                )
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreError.duplicate("tenant \(tenant.name) (id \(tenant.id))")
            }
        }
    }

    package func tenant(id: String) async throws -> Tenant? {
        try await writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.tenantColumns) FROM tenants WHERE id = ?")
            return try Row.fetchOne(statement, arguments: [id]).map(Tenant.init(row:))
        }
    }

    package func tenant(named name: String) async throws -> Tenant? {
        try await writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.tenantColumns) FROM tenants WHERE name = ?")
            return try Row.fetchOne(statement, arguments: [name]).map(Tenant.init(row:))
        }
    }

    package func tenants() async throws -> [Tenant] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.tenantColumns) FROM tenants ORDER BY created_at, name")
                .map(Tenant.init(row:))
        }
    }

    // MARK: - Keys

    private static let keyColumns = "id, tenant_id, secret_hash, created_at, last_used_at, expires_at, revoked_at"

    package func updateTenant(_ tenant: Tenant) async throws {
        try await writer.write { db in
            let nameTaken = try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM tenants WHERE name = ? AND id <> ?)",
                arguments: [tenant.name, tenant.id]
            )
            if nameTaken == true { throw StoreError.duplicate("tenant \(tenant.name)") }
            try db.execute(
                sql: """
                    UPDATE tenants SET name = ?, rate_per_second = ?, burst = ?, daily_quota = ?,
                    per_device_per_minute = ?, allow_critical_alerts = ?, disabled = ?, allowed_providers = ?,
                    critical_channel = ?, note = ?, deleted_at = ?, apps = ?, default_app = ?,
                    critical_reserve_per_hour = ? WHERE id = ?
                    """,
                arguments: [
                    tenant.name, tenant.limits.ratePerSecond, tenant.limits.burst, tenant.limits.dailyQuota,
                    tenant.limits.perDevicePerMinute, tenant.allowCriticalAlerts, tenant.disabled,
                    tenant.allowedProvidersColumn, tenant.criticalChannel, tenant.note, tenant.deletedAt?.unixSeconds,
                    tenant.appsColumn, tenant.defaultApp, tenant.limits.criticalReservePerHour, tenant.id,
                ]
            )
            guard db.changesCount > 0 else { throw StoreError.notFound("tenant \(tenant.id)") }
        }
    }

    package func updateKey(_ key: TenantKeyRecord) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE tenant_keys SET expires_at = ?, revoked_at = ? WHERE id = ?",
                arguments: [key.expiresAt?.unixSeconds, key.revokedAt?.unixSeconds, key.id]
            )
            guard db.changesCount > 0 else { throw StoreError.notFound("key \(key.id)") }
        }
    }

    package func createKey(_ key: TenantKeyRecord) async throws {
        try await writer.write { db in
            let tenantExists = try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM tenants WHERE id = ?)",
                arguments: [key.tenantID]
            )
            guard tenantExists == true else { throw StoreError.notFound("tenant \(key.tenantID)") }
            do {
                try db.execute(
                    sql: "INSERT INTO tenant_keys (\(Self.keyColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [
                        key.id, key.tenantID, Data(key.secretHash), key.createdAt.unixSeconds,
                        key.lastUsedAt?.unixSeconds, key.expiresAt?.unixSeconds, key.revokedAt?.unixSeconds,
                    ]
                )
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
                throw StoreError.notFound("tenant \(key.tenantID)")
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreError.duplicate("key \(key.id)")
            }
        }
    }

    package func key(id: String) async throws -> TenantKeyRecord? {
        try await writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.keyColumns) FROM tenant_keys WHERE id = ?")
            return try Row.fetchOne(statement, arguments: [id]).map(TenantKeyRecord.init(row:))
        }
    }

    package func keys(tenantID: String) async throws -> [TenantKeyRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(Self.keyColumns) FROM tenant_keys WHERE tenant_id = ? ORDER BY created_at, id",
                arguments: [tenantID]
            ).map(TenantKeyRecord.init(row:))
        }
    }

    package func markKeysUsed(_ ids: Set<String>, at date: Date) async throws {
        guard !ids.isEmpty else { return }
        let usedAt = date.unixSeconds
        try await writer.write { db in
            // The condition keeps `last_used_at` moving forward only, whatever order batches arrive in.
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE tenant_keys SET last_used_at = ?1
                    WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at < ?1)
                    """
            )
            for id in ids {
                try statement.execute(arguments: [usedAt, id])
            }
        }
    }

    // MARK: - Secrets

    private static let fingerprintKeySetting = "fingerprint_key"
    private static let fingerprintKeyLength = 32

    package func fingerprintKey() async throws -> [UInt8] {
        if let key = cachedFingerprintKey.withLock({ $0 }) { return key }
        let key = try await writer.write { db -> [UInt8] in
            // Read and insert in one write transaction, which GRDB begins IMMEDIATE: concurrent first calls, even
            // from other processes, agree on one key.
            if let stored = try Data.fetchOne(
                db,
                sql: "SELECT value FROM settings WHERE key = ?",
                arguments: [Self.fingerprintKeySetting]
            ) {
                guard stored.count == Self.fingerprintKeyLength else {
                    throw StoreError.unavailable(
                        "the stored fingerprint key has \(stored.count) bytes, not \(Self.fingerprintKeyLength)"
                    )
                }
                return [UInt8](stored)
            }
            var generator = SystemRandomNumberGenerator()
            let fresh = (0..<Self.fingerprintKeyLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            try db.execute(
                sql: "INSERT INTO settings (key, value) VALUES (?, ?)",
                arguments: [Self.fingerprintKeySetting, Data(fresh)]
            )
            return fresh
        }
        cachedFingerprintKey.withLock { $0 = key }
        return key
    }
}
