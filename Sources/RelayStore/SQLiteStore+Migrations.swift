import GRDB

extension SQLiteStore {
    /// Every schema version, in order. GRDB records applied migrations in `grdb_migrations`, so running it again
    /// does nothing. Never edit a shipped migration: add the next one. Migrations after `v3` are named after what
    /// they add (`usage_not_admitted`, `delivery_journal`), so that changes made side by side cannot take the same
    /// name.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createSchemaV1)
        migrator.registerMigration("v2", migrate: createSchemaV2)
        migrator.registerMigration("v3", migrate: createSchemaV3)
        migrator.registerMigration("usage_not_admitted", migrate: addUsageNotAdmitted)
        migrator.registerMigration("delivery_journal", migrate: createDeliveryJournal)
        migrator.registerMigration("apps", migrate: addApps)
        migrator.registerMigration("receipt_live_activity_event", migrate: addReceiptLiveActivityEvent)
        migrator.registerMigration("critical_reserve", migrate: addCriticalReserve)
        migrator.registerMigration("instance_leases", migrate: addInstanceLeases)
        return migrator
    }()

    /// Tenants, their keys, receipts and settings. Dates are UNIX seconds (`REAL`), booleans 0 or 1.
    private static func createSchemaV1(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE tenants (
                    id TEXT NOT NULL PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    rate_per_second REAL NOT NULL,
                    burst INTEGER NOT NULL,
                    daily_quota INTEGER NOT NULL,
                    per_device_per_minute INTEGER NOT NULL,
                    allow_critical_alerts INTEGER NOT NULL DEFAULT 0,
                    disabled INTEGER NOT NULL DEFAULT 0,
                    created_at REAL NOT NULL
                );

                CREATE TABLE tenant_keys (
                    id TEXT NOT NULL PRIMARY KEY,
                    tenant_id TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                    secret_hash BLOB NOT NULL,
                    created_at REAL NOT NULL,
                    last_used_at REAL,
                    expires_at REAL,
                    revoked_at REAL
                );
                CREATE INDEX tenant_keys_by_tenant ON tenant_keys (tenant_id, created_at);

                -- No foreign keys here: a receipt outlives nothing it points to, and the insert is the hot path.
                -- Receipt ids are unique across tenants (the relay makes them), so the primary key serves the
                -- tenant-scoped lookup (`WHERE id IN (...) AND tenant_id = ?`) and the updates by id alike.
                CREATE TABLE receipts (
                    id TEXT NOT NULL PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    key_id TEXT NOT NULL,
                    provider TEXT NOT NULL,
                    token_fingerprint TEXT NOT NULL,
                    is_critical INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    error_code TEXT,
                    message TEXT,
                    remove_token INTEGER NOT NULL DEFAULT 0,
                    provider_message_id TEXT,
                    expo_ticket_id TEXT,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    expires_at REAL NOT NULL
                );
                -- The Expo receipt poller: tickets still awaited, by ticket and oldest first. Partial, so they
                -- hold only the few receipts waiting for Expo.
                CREATE INDEX receipts_pending_by_expo_ticket ON receipts (expo_ticket_id)
                    WHERE status = 'pending' AND expo_ticket_id IS NOT NULL;
                CREATE INDEX receipts_pending_expo_by_created ON receipts (created_at)
                    WHERE status = 'pending' AND expo_ticket_id IS NOT NULL;
                -- Pruning.
                CREATE INDEX receipts_by_expiry ON receipts (expires_at);

                CREATE TABLE settings (
                    key TEXT NOT NULL PRIMARY KEY,
                    value BLOB NOT NULL
                );
                """
        )
    }

    /// The operators' issue: tenant policy and soft deletion, operator tokens, usage counters, the audit log.
    private static func createSchemaV2(_ db: Database) throws {
        try db.execute(
            sql: """
                -- Comma-separated provider names; NULL allows every provider.
                ALTER TABLE tenants ADD COLUMN allowed_providers TEXT;
                ALTER TABLE tenants ADD COLUMN critical_channel TEXT;
                ALTER TABLE tenants ADD COLUMN note TEXT;
                ALTER TABLE tenants ADD COLUMN deleted_at REAL;

                CREATE TABLE operators (
                    id TEXT NOT NULL PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    role TEXT NOT NULL,
                    secret_hash BLOB NOT NULL,
                    created_at REAL NOT NULL,
                    revoked_at REAL
                );

                -- One row per tenant, UTC day and provider; the commit queue adds to it.
                CREATE TABLE usage_daily (
                    tenant_id TEXT NOT NULL,
                    day TEXT NOT NULL,
                    provider TEXT NOT NULL,
                    delivered INTEGER NOT NULL DEFAULT 0,
                    token_invalid INTEGER NOT NULL DEFAULT 0,
                    rejected INTEGER NOT NULL DEFAULT 0,
                    rate_limited INTEGER NOT NULL DEFAULT 0,
                    failed INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (tenant_id, day, provider)
                );

                -- The audit log: append-only, one hash chain per writing instance. `position` is the order of
                -- writing, which verification walks; (chain, seq) is unique and finds a chain's head.
                CREATE TABLE audit_records (
                    position INTEGER PRIMARY KEY AUTOINCREMENT,
                    chain TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    time_ms INTEGER NOT NULL,
                    event TEXT NOT NULL,
                    tenant_id TEXT,
                    key_id TEXT,
                    request_id TEXT,
                    client TEXT,
                    provider TEXT,
                    token_fingerprint TEXT,
                    critical INTEGER,
                    outcome TEXT,
                    upstream_status INTEGER,
                    upstream_reason TEXT,
                    attempts INTEGER,
                    latency_ms INTEGER,
                    actor TEXT,
                    before_json TEXT,
                    after_json TEXT,
                    detail TEXT,
                    link BLOB NOT NULL,
                    UNIQUE (chain, seq)
                );
                CREATE INDEX audit_records_by_chain ON audit_records (chain, position);
                CREATE INDEX audit_records_by_tenant ON audit_records (tenant_id, time_ms);
                CREATE INDEX audit_records_by_time ON audit_records (time_ms);

                CREATE TABLE audit_checkpoints (
                    chain TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    link BLOB NOT NULL,
                    time_ms INTEGER NOT NULL,
                    key_id TEXT NOT NULL,
                    signature BLOB NOT NULL,
                    PRIMARY KEY (chain, seq, key_id)
                );

                -- Where each pruned chain now starts: the seq and link of the last record pruned.
                CREATE TABLE audit_anchors (
                    chain TEXT NOT NULL PRIMARY KEY,
                    seq INTEGER NOT NULL,
                    link BLOB NOT NULL
                );
                """
        )
    }

    /// Expo notifications count as accepted until their receipt is known. Those still waiting for it were counted as
    /// delivered; they move to `accepted`, on the UTC day their receipt was made, where the receipt will take them
    /// from.
    private static func createSchemaV3(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE usage_daily ADD COLUMN accepted INTEGER NOT NULL DEFAULT 0;

                INSERT INTO usage_daily (tenant_id, day, provider, delivered, accepted)
                    SELECT tenant_id, strftime('%Y-%m-%d', created_at, 'unixepoch'), 'expo', -COUNT(*), COUNT(*)
                    FROM receipts WHERE status = 'pending' AND expo_ticket_id IS NOT NULL
                    GROUP BY tenant_id, strftime('%Y-%m-%d', created_at, 'unixepoch')
                ON CONFLICT (tenant_id, day, provider) DO UPDATE SET
                    delivered = delivered + excluded.delivered,
                    accepted = accepted + excluded.accepted;
                """
        )
    }

    /// The daily quota counts from the store (a relay starts each tenant's day from it), so usage tells the
    /// notifications of requests refused whole apart from the other rate-limited ones: `not_admitted` counts the
    /// former, which `rate_limited` also holds. Rows written before count none: on the day of the upgrade, refused
    /// requests count against the quota of a relay that starts again that day.
    private static func addUsageNotAdmitted(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE usage_daily ADD COLUMN not_admitted INTEGER NOT NULL DEFAULT 0")
    }

    /// The delivery journal: the notifications accepted and not concluded yet, which a relay resumes after a crash
    /// (`SQLiteStore+Journal.swift`). `sealed` is AES-GCM ciphertext made by the relay: the token and content never
    /// reach the database in clear. No foreign key, as for receipts: the insert is on the path of a pending answer.
    private static func createDeliveryJournal(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE delivery_journal (
                    receipt_id TEXT NOT NULL PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    deadline REAL NOT NULL,
                    attempts INTEGER NOT NULL,
                    claimed_by TEXT NOT NULL,
                    lease_until REAL NOT NULL,
                    sealed BLOB NOT NULL
                );
                -- Claims: entries whose lease has ended, and the oldest first.
                CREATE INDEX delivery_journal_by_lease ON delivery_journal (lease_until);
                CREATE INDEX delivery_journal_by_created ON delivery_journal (created_at);
                """
        )
    }

    /// Several apps on one relay: the apps a tenant may send for (comma-separated names, sorted), the one its
    /// messages take when they name none, the app of each receipt and of each push's audit record, and usage by app.
    /// Every tenant and receipt so far was the default app's.
    private static func addApps(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE tenants ADD COLUMN apps TEXT NOT NULL DEFAULT 'default';
                ALTER TABLE tenants ADD COLUMN default_app TEXT NOT NULL DEFAULT 'default';
                ALTER TABLE receipts ADD COLUMN app TEXT NOT NULL DEFAULT 'default';
                -- A push's app; NULL for the default app's (the audit log leaves it out of such records).
                ALTER TABLE audit_records ADD COLUMN app TEXT;

                -- Usage by app: the app joins the primary key, which SQLite changes only by a new table.
                CREATE TABLE usage_daily_by_app (
                    tenant_id TEXT NOT NULL,
                    day TEXT NOT NULL,
                    provider TEXT NOT NULL,
                    app TEXT NOT NULL DEFAULT 'default',
                    delivered INTEGER NOT NULL DEFAULT 0,
                    token_invalid INTEGER NOT NULL DEFAULT 0,
                    rejected INTEGER NOT NULL DEFAULT 0,
                    rate_limited INTEGER NOT NULL DEFAULT 0,
                    failed INTEGER NOT NULL DEFAULT 0,
                    accepted INTEGER NOT NULL DEFAULT 0,
                    not_admitted INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (tenant_id, day, provider, app)
                );
                INSERT INTO usage_daily_by_app (tenant_id, day, provider, delivered, token_invalid, rejected,
                    rate_limited, failed, accepted, not_admitted)
                    SELECT tenant_id, day, provider, delivered, token_invalid, rejected, rate_limited, failed,
                        accepted, not_admitted
                    FROM usage_daily;
                DROP TABLE usage_daily;
                ALTER TABLE usage_daily_by_app RENAME TO usage_daily;
                """
        )
    }

    /// The `event` of a Live Activity push (`start`, `update`, `end`) on its receipt; NULL for every other push, and
    /// for every receipt written before.
    private static func addReceiptLiveActivityEvent(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE receipts ADD COLUMN live_activity_event TEXT")
    }

    /// Critical headroom: each tenant's reserve of critical notifications per UTC hour beyond its other limits (120
    /// for every tenant so far, the default), what each hour's reserve has given (`SQLiteStore+CriticalReserve.swift`;
    /// `hour` is UNIX seconds / 3600), and the critical notifications among a day's usage (a subset of the other
    /// columns, not a column of its own in the total).
    private static func addCriticalReserve(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE tenants ADD COLUMN critical_reserve_per_hour INTEGER NOT NULL DEFAULT 120;

                CREATE TABLE critical_reserve (
                    tenant_id TEXT NOT NULL,
                    hour INTEGER NOT NULL,
                    used INTEGER NOT NULL,
                    PRIMARY KEY (tenant_id, hour)
                );

                ALTER TABLE usage_daily ADD COLUMN critical INTEGER NOT NULL DEFAULT 0;
                """
        )
    }

    /// Who runs as each instance id (``InstanceLease``).
    private static func addInstanceLeases(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE instance_leases (
                    instance TEXT NOT NULL PRIMARY KEY,
                    token TEXT NOT NULL,
                    holder TEXT NOT NULL,
                    started_at REAL NOT NULL,
                    lease_until REAL NOT NULL
                );
                """
        )
    }
}
