package import Foundation
package import RelayCore


/// Everything PushRelay keeps: tenants, their keys, and receipts.
///
/// Implementations: ``MemoryStore`` for tests, ``SQLiteStore`` (the embedded default) and, for several instances,
/// the PostgreSQL store. Every method is safe to call concurrently. The Expo receipt poller reads and completes
/// receipts through the ``ExpoReceiptStore`` part.
package protocol PushStore: ExpoReceiptStore {
    /// Creates or upgrades the schema; called once at start.
    func migrate() async throws
    /// Succeeds when the store answers (readiness).
    func ping() async throws

    // MARK: Tenants
    /// - Throws: ``StoreError/duplicate(_:)`` when the name is taken.
    func createTenant(_ tenant: Tenant) async throws
    func tenant(id: String) async throws -> Tenant?
    func tenant(named name: String) async throws -> Tenant?
    func tenants() async throws -> [Tenant]
    /// Replaces a tenant's name, limits, policy and state (by id).
    ///
    /// - Throws: ``StoreError/notFound(_:)`` for an unknown id; ``StoreError/duplicate(_:)`` when the new name is
    ///   another tenant's.
    func updateTenant(_ tenant: Tenant) async throws

    // MARK: Keys
    /// - Throws: ``StoreError/notFound(_:)`` when the tenant does not exist.
    func createKey(_ key: TenantKeyRecord) async throws
    func key(id: String) async throws -> TenantKeyRecord?
    func keys(tenantID: String) async throws -> [TenantKeyRecord]
    /// Replaces a key's expiry and revocation (by id; the tenant, hash and dates of use do not change).
    ///
    /// - Throws: ``StoreError/notFound(_:)`` for an unknown id.
    func updateKey(_ key: TenantKeyRecord) async throws
    /// Records that keys were used (batched by the caller; only ever moves `lastUsedAt` forward).
    func markKeysUsed(_ ids: Set<String>, at: Date) async throws

    // MARK: Receipts
    func insertReceipts(_ receipts: [Receipt]) async throws
    func updateReceipts(_ updates: [ReceiptUpdate]) async throws
    /// The receipts among `ids` that belong to `tenantID`; others' are simply absent.
    func receipts(ids: [String], tenantID: String) async throws -> [Receipt]
    /// Deletes receipts that expired before `now`; returns how many.
    func pruneReceipts(now: Date) async throws -> Int

    // MARK: Secrets
    /// A random 32-byte key made on first use and kept, for token fingerprints that stay stable across restarts and
    /// instances.
    func fingerprintKey() async throws -> [UInt8]
}
