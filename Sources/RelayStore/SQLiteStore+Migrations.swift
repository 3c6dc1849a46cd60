import GRDB

extension SQLiteStore {
    /// Every schema version, in order. GRDB records applied migrations in `grdb_migrations`, so running it again
    /// does nothing. Never edit a shipped migration: add the next one.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createSchemaV1)
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
}
