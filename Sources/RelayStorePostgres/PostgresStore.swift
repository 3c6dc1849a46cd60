package import Foundation
package import Logging
import PostgresNIO
import RelayCore
package import RelayStore
import Synchronization

/// The store for several relays sharing one PostgreSQL database, through postgres-nio's `PostgresClient`.
///
/// ### Overview
/// The same tables and rules as ``SQLiteStore`` (the conformance suite holds both to ``MemoryStore``'s behaviour),
/// plus the shared rate-limit buckets (``RateLimitLeaseStore``). ``migrate()`` creates or upgrades the schema and is
/// safe when several relays start at once. Every value reaches the server as a bound parameter; the only text put
/// into SQL is the schema name, which ``PostgresStoreConfiguration`` restricts to a plain identifier.
///
/// ### Lifecycle
/// `PostgresClient` is a connection pool that works only while its `run()` runs. The store runs it in a task of its
/// own between ``start()`` and ``shutdown()``: a command opens the store, starts it, migrates, does its work and
/// exits; `pushrelay serve` also lists ``PostgresStoreService`` first among its services, so that the pool closes
/// last, after the delivery queue has written its final receipts. Start it outside any `ServiceGroup`'s services:
/// postgres-nio closes the pool on a graceful shutdown it can see.
///
/// ### Implementation
/// - Dates are UNIX seconds in `double precision` columns, as SQLite keeps them in `REAL`: a `Date` comes back bit
///   for bit (a `timestamptz` would round to the microsecond), and `to_timestamp(created_at)` shows them in `psql`.
/// - A method is one statement where it can be (an upsert, `= ANY($1)` over an array of ids, an update from a
///   `VALUES` list), and one transaction where it needs several: a round trip costs far more than in SQLite.
/// - Unique and foreign-key violations become ``StoreError/duplicate(_:)`` and ``StoreError/notFound(_:)``; any other
///   failure is postgres-nio's error, whose description withholds the server's details (they may hold values).
package final class PostgresStore: PushStore {
    package let configuration: PostgresStoreConfiguration
    let client: PostgresClient
    let logger: Logger
    /// The task running the pool, owned by the store (see "Lifecycle").
    private let runState = Mutex(RunState.idle)
    /// The fingerprint key never changes once made, so it is read once.
    private let cachedFingerprintKey = Mutex<[UInt8]?>(nil)

    private enum RunState {
        case idle
        /// ``start()`` is making the task.
        case starting
        case running(Task<Void, Never>)
        case shutDown
    }

    /// Makes a store for a configuration; nothing connects before ``start()``.
    package init(configuration: PostgresStoreConfiguration, logger: Logger = Logger(label: "pushrelay.store")) {
        self.configuration = configuration
        self.logger = logger
        var client = PostgresClient.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.username,
            password: configuration.password,
            database: configuration.database,
            tls: configuration.clientTLS()
        )
        client.options.maximumConnections = configuration.maximumConnections
        client.options.connectTimeout = .seconds(10)
        if let schema = configuration.schema {
            // A startup parameter, so that every connection of the pool resolves table names in the schema.
            client.options.additionalStartupParameters = [("search_path", schema)]
        }
        self.client = PostgresClient(configuration: client, backgroundLogger: logger)
    }

    /// Makes a store for `store.url`.
    ///
    /// - Throws: ``StoreError/unavailable(_:)`` when the URL is not a usable PostgreSQL URL.
    package convenience init(url: String, logger: Logger = Logger(label: "pushrelay.store")) throws(StoreError) {
        self.init(configuration: try PostgresStoreConfiguration(url: url), logger: logger)
    }

    deinit {
        // A store dropped while running would leave its pool running with nobody to stop it.
        if case .running(let task) = runState.withLock({ $0 }) { task.cancel() }
    }

    /// Starts the connection pool in a task the store owns. Calling it again does nothing.
    package func start() {
        let starts = runState.withLock { state in
            guard case .idle = state else { return false }
            state = .starting
            return true
        }
        guard starts else { return }
        // Made outside the lock: an immediate task runs its first steps right here.
        let task = Self.run(client)
        let stopped = runState.withLock { state in
            guard case .starting = state else { return true }
            state = .running(task)
            return false
        }
        if stopped { task.cancel() }
    }

    /// A task running `client`. Where available it starts immediately, so that the pool counts as running when
    /// ``start()`` returns (a query arriving first would wait anyway, but postgres-nio warns about it).
    private static func run(_ client: PostgresClient) -> Task<Void, Never> {
        if #available(macOS 26, *) {
            return Task.immediate { await client.run() }
        }
        return Task { await client.run() }
    }

    /// Closes the pool's connections and waits until they are closed; queries fail afterwards.
    package func shutdown() async {
        let task: Task<Void, Never>? = runState.withLock { state in
            defer { state = .shutDown }
            guard case .running(let task) = state else { return nil }
            return task
        }
        guard let task else { return }
        task.cancel()
        await task.value
    }

    /// Drops the configured schema with everything in it: for tests, each of which works in a schema of its own.
    ///
    /// - Throws: ``StoreError/unavailable(_:)`` when no schema is configured (the store never drops `public`).
    package func dropSchema() async throws {
        guard let schema = configuration.schema, PostgresStoreConfiguration.isPlainIdentifier(schema) else {
            throw StoreError.unavailable("the store has no schema of its own to drop")
        }
        // An identifier cannot be a parameter; the configuration admits only [a-z0-9_] names.
        try await execute("DROP SCHEMA IF EXISTS \(unescaped: schema) CASCADE")
    }

    package func ping() async throws {
        try await execute("SELECT 1")
    }

    // MARK: - Tenants

    static let tenantColumns = """
        id, name, rate_per_second, burst, daily_quota, per_device_per_minute, allow_critical_alerts, disabled, \
        created_at, allowed_providers, critical_channel, note, deleted_at, apps, default_app, \
        critical_reserve_per_hour
        """

    package func createTenant(_ tenant: Tenant) async throws {
        do {
            try await execute(
                """
                INSERT INTO tenants (\(unescaped: Self.tenantColumns))
                VALUES (\(tenant.id), \(tenant.name), \(tenant.limits.ratePerSecond), \(tenant.limits.burst),
                    \(tenant.limits.dailyQuota), \(tenant.limits.perDevicePerMinute), \(tenant.allowCriticalAlerts),
                    \(tenant.disabled), \(tenant.createdAt.unixSeconds), \(tenant.allowedProvidersColumn),
                    \(tenant.criticalChannel), \(tenant.note), \(tenant.deletedAt?.unixSeconds),
                    \(tenant.appsColumn), \(tenant.defaultApp), \(tenant.limits.criticalReservePerHour))
                """
            )
        } catch let error as PostgresStoreError where error.violates(.unique, constraint: "tenants_name_key") {
            throw StoreError.duplicate("tenant \(tenant.name)")
        } catch let error as PostgresStoreError where error.violates(.unique) {
            throw StoreError.duplicate("tenant \(tenant.name) (id \(tenant.id))")
        }
    }

    package func tenant(id: String) async throws -> Tenant? {
        try await rows("SELECT \(unescaped: Self.tenantColumns) FROM tenants WHERE id = \(id)")
            .first.map(Tenant.init(row:))
    }

    package func tenant(named name: String) async throws -> Tenant? {
        try await rows("SELECT \(unescaped: Self.tenantColumns) FROM tenants WHERE name = \(name)")
            .first.map(Tenant.init(row:))
    }

    package func tenants() async throws -> [Tenant] {
        // `COLLATE "C"`: names sort by code point, as in SQLite and `MemoryStore`, whatever the database's locale.
        try await rows("SELECT \(unescaped: Self.tenantColumns) FROM tenants ORDER BY created_at, name COLLATE \"C\"")
            .map(Tenant.init(row:))
    }

    package func updateTenant(_ tenant: Tenant) async throws {
        let updated: [PostgresRow]
        do {
            updated = try await rows(
                """
                UPDATE tenants SET name = \(tenant.name), rate_per_second = \(tenant.limits.ratePerSecond),
                    burst = \(tenant.limits.burst), daily_quota = \(tenant.limits.dailyQuota),
                    per_device_per_minute = \(tenant.limits.perDevicePerMinute),
                    allow_critical_alerts = \(tenant.allowCriticalAlerts), disabled = \(tenant.disabled),
                    allowed_providers = \(tenant.allowedProvidersColumn), critical_channel = \(tenant.criticalChannel),
                    note = \(tenant.note), deleted_at = \(tenant.deletedAt?.unixSeconds),
                    apps = \(tenant.appsColumn), default_app = \(tenant.defaultApp),
                    critical_reserve_per_hour = \(tenant.limits.criticalReservePerHour)
                WHERE id = \(tenant.id)
                RETURNING id
                """
            )
        } catch let error as PostgresStoreError where error.violates(.unique) {
            throw StoreError.duplicate("tenant \(tenant.name)")
        }
        guard !updated.isEmpty else { throw StoreError.notFound("tenant \(tenant.id)") }
    }

    // MARK: - Keys

    static let keyColumns = "id, tenant_id, secret_hash, created_at, last_used_at, expires_at, revoked_at"

    package func createKey(_ key: TenantKeyRecord) async throws {
        let inserted: [PostgresRow]
        do {
            // Inserted only when the tenant exists, so that an unknown tenant is "not found" even for a taken id.
            inserted = try await rows(
                """
                INSERT INTO tenant_keys (\(unescaped: Self.keyColumns))
                SELECT \(key.id), \(key.tenantID), \(ByteBuffer(bytes: key.secretHash)), \(key.createdAt.unixSeconds),
                    \(key.lastUsedAt?.unixSeconds), \(key.expiresAt?.unixSeconds), \(key.revokedAt?.unixSeconds)
                WHERE EXISTS (SELECT 1 FROM tenants WHERE id = \(key.tenantID))
                RETURNING id
                """
            )
        } catch let error as PostgresStoreError where error.violates(.foreignKey) {
            throw StoreError.notFound("tenant \(key.tenantID)")
        } catch let error as PostgresStoreError where error.violates(.unique) {
            throw StoreError.duplicate("key \(key.id)")
        }
        guard !inserted.isEmpty else { throw StoreError.notFound("tenant \(key.tenantID)") }
    }

    package func key(id: String) async throws -> TenantKeyRecord? {
        try await rows("SELECT \(unescaped: Self.keyColumns) FROM tenant_keys WHERE id = \(id)")
            .first.map(TenantKeyRecord.init(row:))
    }

    package func keys(tenantID: String) async throws -> [TenantKeyRecord] {
        try await rows(
            """
            SELECT \(unescaped: Self.keyColumns) FROM tenant_keys WHERE tenant_id = \(tenantID)
            ORDER BY created_at, id COLLATE "C"
            """
        ).map(TenantKeyRecord.init(row:))
    }

    package func updateKey(_ key: TenantKeyRecord) async throws {
        let updated = try await rows(
            """
            UPDATE tenant_keys SET expires_at = \(key.expiresAt?.unixSeconds), revoked_at = \(key.revokedAt?.unixSeconds)
            WHERE id = \(key.id)
            RETURNING id
            """
        )
        guard !updated.isEmpty else { throw StoreError.notFound("key \(key.id)") }
    }

    package func markKeysUsed(_ ids: Set<String>, at date: Date) async throws {
        guard !ids.isEmpty else { return }
        let usedAt = date.unixSeconds
        // The condition keeps `last_used_at` moving forward only, whatever order batches arrive in.
        try await execute(
            """
            UPDATE tenant_keys SET last_used_at = \(usedAt)
            WHERE id = ANY(\(Array(ids))) AND (last_used_at IS NULL OR last_used_at < \(usedAt))
            """
        )
    }

    // MARK: - Secrets

    private static let fingerprintKeySetting = "fingerprint_key"
    private static let fingerprintKeyLength = 32

    package func fingerprintKey() async throws -> [UInt8] {
        if let key = cachedFingerprintKey.withLock({ $0 }) { return key }
        var generator = SystemRandomNumberGenerator()
        let fresh = (0..<Self.fingerprintKeyLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        // Concurrent first calls, even from other relays, agree on one key: the first insert wins, the others wait
        // for it on the primary key and then change nothing, and everyone reads what is stored.
        try await execute(
            """
            INSERT INTO settings (key, value) VALUES (\(Self.fingerprintKeySetting), \(ByteBuffer(bytes: fresh)))
            ON CONFLICT (key) DO NOTHING
            """
        )
        guard
            let row = try await rows("SELECT value FROM settings WHERE key = \(Self.fingerprintKeySetting)").first
        else {
            throw StoreError.unavailable("the fingerprint key vanished from the settings table")
        }
        let stored: Data = try row.makeRandomAccess().value("value")
        guard stored.count == Self.fingerprintKeyLength else {
            throw StoreError.unavailable(
                "the stored fingerprint key has \(stored.count) bytes, not \(Self.fingerprintKeyLength)"
            )
        }
        let key = [UInt8](stored)
        cachedFingerprintKey.withLock { $0 = key }
        return key
    }
}
