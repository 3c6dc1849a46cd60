package import Foundation
package import RelayCore

/// A store that hands every call to another one, ``base``. Tests wrap a real store in one to change a single call (a
/// commit that fails, a tenant that reads as disabled) and implement only that call; everything else is forwarded.
package protocol ForwardingPushStore: PushStore {
    associatedtype Base: PushStore
    var base: Base { get }
}

extension ForwardingPushStore {
    package func migrate() async throws { try await base.migrate() }
    package func ping() async throws { try await base.ping() }

    package func createTenant(_ tenant: Tenant) async throws { try await base.createTenant(tenant) }
    package func tenant(id: String) async throws -> Tenant? { try await base.tenant(id: id) }
    package func tenant(named name: String) async throws -> Tenant? { try await base.tenant(named: name) }
    package func tenants() async throws -> [Tenant] { try await base.tenants() }
    package func updateTenant(_ tenant: Tenant) async throws { try await base.updateTenant(tenant) }

    package func createKey(_ key: TenantKeyRecord) async throws { try await base.createKey(key) }
    package func key(id: String) async throws -> TenantKeyRecord? { try await base.key(id: id) }
    package func keys(tenantID: String) async throws -> [TenantKeyRecord] { try await base.keys(tenantID: tenantID) }
    package func updateKey(_ key: TenantKeyRecord) async throws { try await base.updateKey(key) }
    package func markKeysUsed(_ ids: Set<String>, at date: Date) async throws {
        try await base.markKeysUsed(ids, at: date)
    }

    package func receipts(ids: [String], tenantID: String) async throws -> [Receipt] {
        try await base.receipts(ids: ids, tenantID: tenantID)
    }
    package func pendingReceipt(expoTicketID: String) async throws -> Receipt? {
        try await base.pendingReceipt(expoTicketID: expoTicketID)
    }
    package func pendingExpoTickets(sentBefore: Date, limit: Int, app: String?) async throws -> [String] {
        try await base.pendingExpoTickets(sentBefore: sentBefore, limit: limit, app: app)
    }
    package func pruneReceipts(now: Date) async throws -> Int { try await base.pruneReceipts(now: now) }

    package func commit(_ batch: StoreBatch) async throws { try await base.commit(batch) }

    package func createOperator(_ record: OperatorRecord) async throws { try await base.createOperator(record) }
    package func operatorRecord(id: String) async throws -> OperatorRecord? { try await base.operatorRecord(id: id) }
    package func operators() async throws -> [OperatorRecord] { try await base.operators() }
    package func updateOperator(_ record: OperatorRecord) async throws { try await base.updateOperator(record) }

    package func usage(tenantID: String, fromDay: String) async throws -> [UsageRow] {
        try await base.usage(tenantID: tenantID, fromDay: fromDay)
    }

    package func takeCriticalReserve(tenantID: String, hour: Int64, count: Int, limit: Int) async throws -> Int {
        try await base.takeCriticalReserve(tenantID: tenantID, hour: hour, count: count, limit: limit)
    }
    package func criticalReserveUsed(tenantID: String, hour: Int64) async throws -> Int {
        try await base.criticalReserveUsed(tenantID: tenantID, hour: hour)
    }

    package func auditHead(chain: String) async throws -> AuditAnchor? { try await base.auditHead(chain: chain) }
    package func auditChains() async throws -> [String] { try await base.auditChains() }
    package func auditAnchor(chain: String) async throws -> AuditAnchor? { try await base.auditAnchor(chain: chain) }
    package func auditRecords(chain: String, after position: Int64, limit: Int) async throws -> [StoredAuditRecord] {
        try await base.auditRecords(chain: chain, after: position, limit: limit)
    }
    package func auditRecords(
        matching filter: AuditFilter,
        after position: Int64,
        limit: Int
    ) async throws -> [StoredAuditRecord] {
        try await base.auditRecords(matching: filter, after: position, limit: limit)
    }
    package func auditCheckpoints(chain: String) async throws -> [AuditCheckpoint] {
        try await base.auditCheckpoints(chain: chain)
    }
    package func pruneAudit(to anchor: AuditAnchor) async throws -> Int { try await base.pruneAudit(to: anchor) }

    package func fingerprintKey() async throws -> [UInt8] { try await base.fingerprintKey() }

    package func claimInstance(_ lease: InstanceLease, now: Date) async throws -> InstanceLease {
        try await base.claimInstance(lease, now: now)
    }
    package func renewInstance(_ instance: String, token: String, until: Date) async throws -> Bool {
        try await base.renewInstance(instance, token: token, until: until)
    }
    package func releaseInstance(_ instance: String, token: String) async throws {
        try await base.releaseInstance(instance, token: token)
    }
    package func claimJournal(_ claim: JournalClaim) async throws -> [JournalEntry] {
        try await base.claimJournal(claim)
    }
    package func renewJournalLeases(receiptIDs: [String], instance: String, until: Date) async throws -> Int {
        try await base.renewJournalLeases(receiptIDs: receiptIDs, instance: instance, until: until)
    }
    package func journalStatistics(tenantID: String?) async throws -> JournalStatistics {
        try await base.journalStatistics(tenantID: tenantID)
    }
}
