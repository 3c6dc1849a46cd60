package import Foundation
package import RelayCore

/// Everything PushRelay keeps: tenants, their keys, operators, receipts, usage counters and the audit log.
///
/// Implementations: ``MemoryStore`` for tests, ``SQLiteStore`` (the embedded default) and, for several instances,
/// the PostgreSQL store. Every method is safe to call concurrently. Receipts, usage and the audit log are written
/// only through ``commit(_:)``, which the relay's commit queue calls.
package protocol PushStore: Sendable {
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

    // MARK: Receipts (written through `commit`)
    /// The receipts among `ids` that belong to `tenantID`; others' are simply absent.
    func receipts(ids: [String], tenantID: String) async throws -> [Receipt]
    /// The receipt still pending for an Expo ticket, if any: the record Expo's receipt concludes.
    func pendingReceipt(expoTicketID: String) async throws -> Receipt?
    /// Ticket ids whose push was accepted by Expo before `sentBefore` and whose receipt has not arrived, oldest first;
    /// only those of `app` (each app's Expo receipts are asked for with its own access token), or of every app.
    func pendingExpoTickets(sentBefore: Date, limit: Int, app: String?) async throws -> [String]
    /// Deletes receipts that expired before `now`; returns how many.
    func pruneReceipts(now: Date) async throws -> Int

    // MARK: Group commit
    /// Writes everything a batch holds in one transaction: all of it or none of it. The relay's commit queue gathers
    /// the receipts, receipt updates and usage of many requests into one batch (group commit).
    ///
    /// - Throws: ``StoreError/receiptsAlreadyFinal(_:)``, writing nothing, when one of the batch's
    ///   ``StoreBatch/receiptCloses`` finds its receipt no longer pending.
    func commit(_ batch: StoreBatch) async throws

    // MARK: Operators
    /// - Throws: ``StoreError/duplicate(_:)`` when the name or id is taken.
    func createOperator(_ record: OperatorRecord) async throws
    func operatorRecord(id: String) async throws -> OperatorRecord?
    /// Every operator, oldest first.
    func operators() async throws -> [OperatorRecord]
    /// Replaces an operator's role and revocation (by id).
    ///
    /// - Throws: ``StoreError/notFound(_:)`` for an unknown id.
    func updateOperator(_ record: OperatorRecord) async throws

    // MARK: Usage
    /// A tenant's usage from `fromDay` (`YYYY-MM-DD`, inclusive) on, by day then provider.
    func usage(tenantID: String, fromDay: String) async throws -> [UsageRow]

    // MARK: Critical reserve
    /// Takes up to `count` notifications from the tenant's critical reserve of UTC hour `hour` (UNIX seconds / 3600),
    /// of which at most `limit` may be taken in that hour; returns how many were taken (0...count), atomically, so that
    /// relays sharing the store never take more than `limit` together.
    ///
    /// The counts outlive the process (but in ``MemoryStore``). The first take of a tenant's hour deletes the counts
    /// of its hours more than ``criticalReserveRetentionHours`` before it.
    func takeCriticalReserve(tenantID: String, hour: Int64, count: Int, limit: Int) async throws -> Int
    /// How many of the tenant's critical reserve of UTC hour `hour` are taken.
    func criticalReserveUsed(tenantID: String, hour: Int64) async throws -> Int

    // MARK: Audit log (records and checkpoints arrive through `commit`)
    /// The last stored record of `chain` as an anchor, or the prune anchor when no record is left; `nil` for a chain
    /// never written. A writer resumes its chain from here.
    func auditHead(chain: String) async throws -> AuditAnchor?
    /// Every chain with records or a prune anchor, sorted.
    func auditChains() async throws -> [String]
    /// Where the retained records of `chain` start: the anchor its last pruning left (`nil`: the genesis).
    func auditAnchor(chain: String) async throws -> AuditAnchor?
    /// Records of `chain` in stored order, after `position` (exclusive; 0 for the start), at most `limit`.
    func auditRecords(chain: String, after position: Int64, limit: Int) async throws -> [StoredAuditRecord]
    /// Records of every chain matching `filter`, in stored order after `position`, at most `limit`.
    func auditRecords(matching filter: AuditFilter, after position: Int64, limit: Int) async throws
        -> [StoredAuditRecord]
    /// The checkpoints of `chain`, by seq.
    func auditCheckpoints(chain: String) async throws -> [AuditCheckpoint]
    /// Deletes the records of `anchor.chain` up to and including `anchor.seq` and keeps `anchor` (the link of record
    /// `anchor.seq`) as where the chain now starts; checkpoints before it go too. Returns how many records went.
    func pruneAudit(to anchor: AuditAnchor) async throws -> Int

    // MARK: Delivery journal (entries are written and deleted through `commit`)
    /// Hands journal entries to `claim.instance`: those whose lease has ended by `claim.now` (their holder died, or
    /// stopped renewing them), and with ``JournalClaim/includingOwn`` those the instance itself holds, oldest first,
    /// at most `claim.limit`. Each comes back as it was stored, and is then held by the instance until
    /// `claim.leaseUntil`, its ``JournalEntry/attempts`` counting one more send. Two instances claiming at once never
    /// both get one entry.
    func claimJournal(_ claim: JournalClaim) async throws -> [JournalEntry]
    /// Extends to `until` the leases `instance` still holds on the entries of `receiptIDs`; returns how many.
    @discardableResult
    func renewJournalLeases(receiptIDs: [String], instance: String, until: Date) async throws -> Int
    /// How many entries the journal holds, and the oldest one's admission: all of them, or with `tenantID` only that
    /// tenant's.
    func journalStatistics(tenantID: String?) async throws -> JournalStatistics

    // MARK: Instance leases
    /// Takes the lease on `lease.instance` for `lease.token` when nobody holds it, its holder's lease ended by `now`,
    /// or `lease.token` holds it already; returns who holds it afterwards (`lease` itself when it was taken). Two
    /// processes claiming at once never both get it.
    func claimInstance(_ lease: InstanceLease, now: Date) async throws -> InstanceLease
    /// Extends to `until` the lease `token` holds on `instance`; `false` when it holds it no longer.
    func renewInstance(_ instance: String, token: String, until: Date) async throws -> Bool
    /// Ends the lease `token` holds on `instance`, if it still does.
    func releaseInstance(_ instance: String, token: String) async throws

    // MARK: Secrets
    /// A random 32-byte key made on first use and kept, for token fingerprints that stay stable across restarts and
    /// instances.
    func fingerprintKey() async throws -> [UInt8]
}

extension PushStore {
    /// Hours of critical reserve counts kept before the hour being taken from: old hours are never asked for again,
    /// but a relay whose clock lags another's may still ask for the last one or two.
    package static var criticalReserveRetentionHours: Int64 { 48 }

    /// How many of `count` fit a reserve of `limit` of which `used` are taken: what ``takeCriticalReserve(tenantID:
    /// hour:count:limit:)`` grants, in every store.
    package static func criticalReserveGrant(count: Int, limit: Int, used: Int) -> Int {
        max(0, min(count, limit - used))
    }
}

extension PushStore {
    /// How many entries the whole journal holds, and the oldest one's admission.
    package func journalStatistics() async throws -> JournalStatistics {
        try await journalStatistics(tenantID: nil)
    }
}

extension PushStore {
    /// ``pendingExpoTickets(sentBefore:limit:app:)`` of every app.
    package func pendingExpoTickets(sentBefore: Date, limit: Int) async throws -> [String] {
        try await pendingExpoTickets(sentBefore: sentBefore, limit: limit, app: nil)
    }
}
