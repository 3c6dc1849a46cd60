import PostgresNIO
import RelayStore

extension PostgresStore {
    /// One schema change: its name in `schema_migrations` and its statements (one per query, as the extended query
    /// protocol requires).
    struct Migration {
        let name: String
        let statements: [PostgresQuery]
    }

    /// Every schema change, in order. `v1`, `v2`, … and `usage_not_admitted` mirror SQLite's migrations of the same
    /// names (the same tables and columns in PostgreSQL's types); the others are PostgreSQL's own. Never edit a shipped
    /// migration: add the next one.
    static let migrations: [Migration] = [
        Migration(name: "v1", statements: schemaV1),
        Migration(name: "v2", statements: schemaV2),
        Migration(name: "rate_limit_buckets", statements: rateLimitBuckets),
        Migration(name: "v3", statements: schemaV3),
        Migration(name: "usage_not_admitted", statements: usageNotAdmitted),
        Migration(name: "delivery_journal", statements: deliveryJournal),
        Migration(name: "apps", statements: apps),
        Migration(name: "receipt_live_activity_event", statements: receiptLiveActivityEvent),
        Migration(name: "critical_reserve", statements: criticalReserve),
        Migration(name: "instance_leases", statements: instanceLeases),
    ]

    /// Any 32-bit constant naming "PushRelay's migrations" among the database's advisory locks; the second half of
    /// the key is the `search_path`, so that stores in different schemas do not wait for each other.
    private static let migrationLockNamespace: Int32 = 0x5052_4D47  // "PRMG"

    /// Creates or upgrades the schema.
    ///
    /// Idempotent, and safe when several relays start at once: everything happens in one transaction that first
    /// takes a transaction-scoped advisory lock, so a second relay waits, then finds every migration applied. A
    /// failing migration rolls back whole (PostgreSQL's DDL is transactional).
    package func migrate() async throws {
        start()
        try await checkReachable(within: Self.reachableTimeout)
        let schema = configuration.schema
        try await transaction { transaction in
            try await transaction.execute(
                """
                SELECT pg_advisory_xact_lock(\(Self.migrationLockNamespace), hashtext(current_setting('search_path')))
                """
            )
            if let schema, PostgresStoreConfiguration.isPlainIdentifier(schema) {
                // An identifier cannot be a parameter; the configuration admits only [a-z0-9_] names.
                try await transaction.execute("CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)")
            }
            try await transaction.execute(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    name text PRIMARY KEY,
                    position bigint GENERATED ALWAYS AS IDENTITY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """
            )
            var applied = Set<String>()
            for row in try await transaction.rows("SELECT name FROM schema_migrations") {
                applied.insert(try row.decode(String.self))
            }
            for migration in Self.migrations where !applied.contains(migration.name) {
                for statement in migration.statements { try await transaction.execute(statement) }
                try await transaction.execute("INSERT INTO schema_migrations (name) VALUES (\(migration.name))")
            }
        }
    }

    /// How long ``migrate()`` waits for a first connection. postgres-nio keeps retrying for a minute before it fails
    /// what waits for a connection; a relay or a command should say sooner that the database cannot be reached.
    static let reachableTimeout: Duration = .seconds(15)

    /// Fails when no connection answers within `timeout` (the log says why: refused, authentication, TLS…).
    private func checkReachable(within timeout: Duration) async throws {
        let reachable = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.ping()
                return true
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            // The loser is cancelled: a cancelled wait for a connection leaves the pool's queue at once.
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        guard reachable else {
            throw StoreError.unavailable(
                "no connection to PostgreSQL at \(configuration.host):\(configuration.port) within \(timeout) "
                    + "(user \(configuration.username), database \(configuration.database)); the log says why"
            )
        }
    }

    /// The names of the migrations applied, in the order they were.
    package func appliedMigrations() async throws -> [String] {
        try await rows("SELECT name FROM schema_migrations ORDER BY position").map { try $0.decode(String.self) }
    }

    /// Tenants, their keys, receipts and settings: SQLite's `v1`. Dates are UNIX seconds (`double precision`).
    private static let schemaV1: [PostgresQuery] = [
        """
        CREATE TABLE tenants (
            id text PRIMARY KEY,
            name text NOT NULL UNIQUE,
            rate_per_second double precision NOT NULL,
            burst bigint NOT NULL,
            daily_quota bigint NOT NULL,
            per_device_per_minute bigint NOT NULL,
            allow_critical_alerts boolean NOT NULL DEFAULT false,
            disabled boolean NOT NULL DEFAULT false,
            created_at double precision NOT NULL
        )
        """,
        """
        CREATE TABLE tenant_keys (
            id text PRIMARY KEY,
            tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
            secret_hash bytea NOT NULL,
            created_at double precision NOT NULL,
            last_used_at double precision,
            expires_at double precision,
            revoked_at double precision
        )
        """,
        "CREATE INDEX tenant_keys_by_tenant ON tenant_keys (tenant_id, created_at)",
        // No foreign keys: a receipt outlives nothing it points to, and the insert is the hot path. Receipt ids are
        // unique across tenants (the relay makes them), so the primary key serves the tenant-scoped lookup too.
        """
        CREATE TABLE receipts (
            id text PRIMARY KEY,
            tenant_id text NOT NULL,
            key_id text NOT NULL,
            provider text NOT NULL,
            token_fingerprint text NOT NULL,
            is_critical boolean NOT NULL,
            status text NOT NULL,
            error_code text,
            message text,
            remove_token boolean NOT NULL DEFAULT false,
            provider_message_id text,
            expo_ticket_id text,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            expires_at double precision NOT NULL
        )
        """,
        // The Expo receipt poller: tickets still awaited, by ticket and oldest first. Partial, so they hold only the
        // few receipts waiting for Expo.
        """
        CREATE INDEX receipts_pending_by_expo_ticket ON receipts (expo_ticket_id)
            WHERE status = 'pending' AND expo_ticket_id IS NOT NULL
        """,
        """
        CREATE INDEX receipts_pending_expo_by_created ON receipts (created_at)
            WHERE status = 'pending' AND expo_ticket_id IS NOT NULL
        """,
        "CREATE INDEX receipts_by_expiry ON receipts (expires_at)",
        """
        CREATE TABLE settings (
            key text PRIMARY KEY,
            value bytea NOT NULL
        )
        """,
    ]

    /// The operators' issue: tenant policy and soft deletion, operator tokens, usage counters and the audit log
    /// (SQLite's `v2`).
    private static let schemaV2: [PostgresQuery] = [
        // Comma-separated provider names; NULL allows every provider.
        """
        ALTER TABLE tenants
            ADD COLUMN allowed_providers text,
            ADD COLUMN critical_channel text,
            ADD COLUMN note text,
            ADD COLUMN deleted_at double precision
        """,
        """
        CREATE TABLE operators (
            id text PRIMARY KEY,
            name text NOT NULL UNIQUE,
            role text NOT NULL,
            secret_hash bytea NOT NULL,
            created_at double precision NOT NULL,
            revoked_at double precision
        )
        """,
        // One row per tenant, UTC day and provider; the commit queue adds to it.
        """
        CREATE TABLE usage_daily (
            tenant_id text NOT NULL,
            day text NOT NULL,
            provider text NOT NULL,
            delivered bigint NOT NULL DEFAULT 0,
            token_invalid bigint NOT NULL DEFAULT 0,
            rejected bigint NOT NULL DEFAULT 0,
            rate_limited bigint NOT NULL DEFAULT 0,
            failed bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, day, provider)
        )
        """,
        // The audit log: append-only, one hash chain per writing instance. `position` is the order of writing,
        // which verification walks; (chain, seq) is unique and finds a chain's head.
        """
        CREATE TABLE audit_records (
            position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            chain text NOT NULL,
            seq bigint NOT NULL,
            time_ms bigint NOT NULL,
            event text NOT NULL,
            tenant_id text,
            key_id text,
            request_id text,
            client text,
            provider text,
            token_fingerprint text,
            critical boolean,
            outcome text,
            upstream_status bigint,
            upstream_reason text,
            attempts bigint,
            latency_ms bigint,
            actor text,
            before_json text,
            after_json text,
            detail text,
            link bytea NOT NULL,
            UNIQUE (chain, seq)
        )
        """,
        "CREATE INDEX audit_records_by_chain ON audit_records (chain, position)",
        "CREATE INDEX audit_records_by_tenant ON audit_records (tenant_id, time_ms)",
        "CREATE INDEX audit_records_by_time ON audit_records (time_ms)",
        """
        CREATE TABLE audit_checkpoints (
            chain text NOT NULL,
            seq bigint NOT NULL,
            link bytea NOT NULL,
            time_ms bigint NOT NULL,
            key_id text NOT NULL,
            signature bytea NOT NULL,
            PRIMARY KEY (chain, seq, key_id)
        )
        """,
        // Where each pruned chain now starts: the seq and link of the last record pruned.
        """
        CREATE TABLE audit_anchors (
            chain text PRIMARY KEY,
            seq bigint NOT NULL,
            link bytea NOT NULL
        )
        """,
    ]

    /// The tenants' shared rate-limit buckets (see `PostgresStore+RateLimitLeases.swift`). One row per tenant, made
    /// by its first lease; no foreign key, so that the hot path checks nothing else.
    private static let rateLimitBuckets: [PostgresQuery] = [
        """
        CREATE TABLE rate_limit_buckets (
            tenant_id text PRIMARY KEY,
            theoretical_arrival double precision NOT NULL,
            day bigint NOT NULL,
            used_today bigint NOT NULL,
            last_grant bigint NOT NULL
        )
        """
    ]

    /// Expo notifications count as accepted until their receipt is known (SQLite's `v3`). Those still waiting for it
    /// were counted as delivered; they move to `accepted`, on the UTC day their receipt was made, where the receipt
    /// will take them from.
    private static let schemaV3: [PostgresQuery] = [
        "ALTER TABLE usage_daily ADD COLUMN accepted bigint NOT NULL DEFAULT 0",
        """
        INSERT INTO usage_daily AS u (tenant_id, day, provider, delivered, accepted)
            SELECT tenant_id, to_char(to_timestamp(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, 'expo',
                -count(*), count(*)
            FROM receipts WHERE status = 'pending' AND expo_ticket_id IS NOT NULL
            GROUP BY tenant_id, day
        ON CONFLICT (tenant_id, day, provider) DO UPDATE SET
            delivered = u.delivered + EXCLUDED.delivered,
            accepted = u.accepted + EXCLUDED.accepted
        """,
    ]

    /// Usage tells the notifications of requests refused whole apart from the other rate-limited ones (SQLite's
    /// `usage_not_admitted`): `not_admitted` counts the former, which `rate_limited` also holds.
    private static let usageNotAdmitted: [PostgresQuery] = [
        "ALTER TABLE usage_daily ADD COLUMN not_admitted bigint NOT NULL DEFAULT 0"
    ]

    /// The delivery journal (SQLite's `delivery_journal`): the notifications accepted and not concluded yet, which a
    /// relay resumes after a crash, and which instances claim with a lease (`PostgresStore+Journal.swift`). `sealed` is
    /// AES-GCM ciphertext made by the relay under the journal key every instance shares.
    private static let deliveryJournal: [PostgresQuery] = [
        """
        CREATE TABLE delivery_journal (
            receipt_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            created_at double precision NOT NULL,
            deadline double precision NOT NULL,
            attempts bigint NOT NULL,
            claimed_by text NOT NULL,
            lease_until double precision NOT NULL,
            sealed bytea NOT NULL
        )
        """,
        "CREATE INDEX delivery_journal_by_lease ON delivery_journal (lease_until)",
        "CREATE INDEX delivery_journal_by_created ON delivery_journal (created_at)",
    ]

    /// Several apps on one relay (SQLite's `apps`): the apps a tenant may send for (comma-separated names, sorted),
    /// the one its messages take when they name none, the app of each receipt and of each push's audit record, and
    /// usage by app.
    private static let apps: [PostgresQuery] = [
        """
        ALTER TABLE tenants
            ADD COLUMN apps text NOT NULL DEFAULT 'default',
            ADD COLUMN default_app text NOT NULL DEFAULT 'default'
        """,
        "ALTER TABLE receipts ADD COLUMN app text NOT NULL DEFAULT 'default'",
        "ALTER TABLE audit_records ADD COLUMN app text",
        // Usage by app: the app joins the primary key.
        "ALTER TABLE usage_daily ADD COLUMN app text NOT NULL DEFAULT 'default'",
        "ALTER TABLE usage_daily DROP CONSTRAINT usage_daily_pkey",
        "ALTER TABLE usage_daily ADD PRIMARY KEY (tenant_id, day, provider, app)",
    ]

    /// The `event` of a Live Activity push on its receipt (SQLite's `receipt_live_activity_event`); NULL for every
    /// other push, and for every receipt written before.
    private static let receiptLiveActivityEvent: [PostgresQuery] = [
        "ALTER TABLE receipts ADD COLUMN live_activity_event text"
    ]

    /// Critical headroom (SQLite's `critical_reserve`): each tenant's reserve of critical notifications per UTC hour,
    /// what each hour's reserve has given, shared by every relay on the database
    /// (`PostgresStore+CriticalReserve.swift`), and the critical notifications among a day's usage.
    private static let criticalReserve: [PostgresQuery] = [
        "ALTER TABLE tenants ADD COLUMN critical_reserve_per_hour bigint NOT NULL DEFAULT 120",
        """
        CREATE TABLE critical_reserve (
            tenant_id text NOT NULL,
            hour bigint NOT NULL,
            used bigint NOT NULL,
            PRIMARY KEY (tenant_id, hour)
        )
        """,
        "ALTER TABLE usage_daily ADD COLUMN critical bigint NOT NULL DEFAULT 0",
    ]

    /// Who runs as each instance id (``InstanceLease``), as SQLite's migration of the same name.
    private static let instanceLeases: [PostgresQuery] = [
        """
        CREATE TABLE instance_leases (
            instance text PRIMARY KEY,
            token text NOT NULL,
            holder text NOT NULL,
            started_at double precision NOT NULL,
            lease_until double precision NOT NULL
        )
        """
    ]
}
