package import Foundation
package import RelayCore
import Synchronization

/// A store in memory, for tests and the demo. Nothing survives the process.
package final class MemoryStore: PushStore {
    private struct State {
        var tenants: [String: Tenant] = [:]
        var keys: [String: TenantKeyRecord] = [:]
        var receipts: [String: Receipt] = [:]
        var operators: [String: OperatorRecord] = [:]
        var usage: [UsageKey: UsageCounts] = [:]
        /// In writing order; `position` is the index + 1 of the first record ever written.
        var audit: [StoredAuditRecord] = []
        var nextAuditPosition: Int64 = 1
        var checkpoints: [AuditCheckpoint] = []
        var anchors: [String: AuditAnchor] = [:]
        var fingerprintKey: [UInt8]?
        var commitsFail = false
        var journal: [String: JournalEntry] = [:]
        /// What each tenant's critical reserve gave, by tenant and UTC hour.
        var criticalReserve: [String: [Int64: Int]] = [:]
        var instances: [String: InstanceLease] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// For tests of a store outage: while set, ``commit(_:)`` writes nothing and throws ``StoreError/unavailable(_:)``.
    package func failCommits(_ fail: Bool) {
        state.withLock { $0.commitsFail = fail }
    }

    package func migrate() async throws {}
    package func ping() async throws {}

    package func createTenant(_ tenant: Tenant) async throws {
        try state.withLock { state in
            guard state.tenants[tenant.id] == nil, !state.tenants.values.contains(where: { $0.name == tenant.name })
            else {
                throw StoreError.duplicate("tenant \(tenant.name)")
            }
            state.tenants[tenant.id] = tenant
        }
    }

    package func tenant(id: String) async throws -> Tenant? { state.withLock { $0.tenants[id] } }

    package func tenant(named name: String) async throws -> Tenant? {
        state.withLock { $0.tenants.values.first { $0.name == name } }
    }

    package func tenants() async throws -> [Tenant] {
        state.withLock { $0.tenants.values.sorted { ($0.createdAt, $0.name) < ($1.createdAt, $1.name) } }
    }

    package func updateTenant(_ tenant: Tenant) async throws {
        try state.withLock { state in
            guard state.tenants[tenant.id] != nil else { throw StoreError.notFound("tenant \(tenant.id)") }
            guard !state.tenants.values.contains(where: { $0.name == tenant.name && $0.id != tenant.id }) else {
                throw StoreError.duplicate("tenant \(tenant.name)")
            }
            state.tenants[tenant.id] = tenant
        }
    }

    package func updateKey(_ key: TenantKeyRecord) async throws {
        try state.withLock { state in
            guard state.keys[key.id] != nil else { throw StoreError.notFound("key \(key.id)") }
            state.keys[key.id]?.expiresAt = key.expiresAt
            state.keys[key.id]?.revokedAt = key.revokedAt
        }
    }

    package func createKey(_ key: TenantKeyRecord) async throws {
        try state.withLock { state in
            guard state.tenants[key.tenantID] != nil else { throw StoreError.notFound("tenant \(key.tenantID)") }
            guard state.keys[key.id] == nil else { throw StoreError.duplicate("key \(key.id)") }
            state.keys[key.id] = key
        }
    }

    package func key(id: String) async throws -> TenantKeyRecord? { state.withLock { $0.keys[id] } }

    package func keys(tenantID: String) async throws -> [TenantKeyRecord] {
        state.withLock { $0.keys.values.filter { $0.tenantID == tenantID }.sorted { $0.createdAt < $1.createdAt } }
    }

    package func markKeysUsed(_ ids: Set<String>, at date: Date) async throws {
        state.withLock { state in
            for id in ids where state.keys[id] != nil {
                if (state.keys[id]?.lastUsedAt ?? .distantPast) < date { state.keys[id]?.lastUsedAt = date }
            }
        }
    }

    package func receipts(ids: [String], tenantID: String) async throws -> [Receipt] {
        state.withLock { state in ids.compactMap { state.receipts[$0] }.filter { $0.tenantID == tenantID } }
    }

    package func pendingReceipt(expoTicketID: String) async throws -> Receipt? {
        state.withLock { state in
            state.receipts.values.first { $0.expoTicketID == expoTicketID && $0.status == .pending }
        }
    }

    package func pruneReceipts(now: Date) async throws -> Int {
        state.withLock { state in
            let before = state.receipts.count
            state.receipts = state.receipts.filter { $0.value.expiresAt >= now }
            return before - state.receipts.count
        }
    }

    package func commit(_ batch: StoreBatch) async throws {
        try state.withLock { state in
            if state.commitsFail { throw StoreError.unavailable("commits fail (test)") }
            let alreadyFinal = batch.receiptCloses.filter { state.receipts[$0.id]?.status != .pending }.map(\.id)
            if !alreadyFinal.isEmpty { throw StoreError.receiptsAlreadyFinal(alreadyFinal) }
            for update in batch.receiptCloses { state.receipts[update.id]?.apply(update) }
            for receipt in batch.provisionalReceipts where state.receipts[receipt.id] == nil {
                state.receipts[receipt.id] = receipt
            }
            for receipt in batch.receipts { state.receipts[receipt.id] = receipt }
            for update in batch.receiptUpdates {
                guard var receipt = state.receipts[update.id] else { continue }
                receipt.apply(update)
                state.receipts[update.id] = receipt
            }
            state.usage.merge(batch.usage, uniquingKeysWith: +)
            for record in batch.audit {
                state.audit.append(StoredAuditRecord(position: state.nextAuditPosition, record: record))
                state.nextAuditPosition += 1
            }
            // One per chain, seq and key, as the SQL stores keep them (a head signed again is kept once).
            for checkpoint in batch.checkpoints
            where !state.checkpoints.contains(where: {
                ($0.chain, $0.seq, $0.keyID) == (checkpoint.chain, checkpoint.seq, checkpoint.keyID)
            }) {
                state.checkpoints.append(checkpoint)
            }
            for entry in batch.journal {
                guard let receipt = state.receipts[entry.receiptID], receipt.status == .pending,
                    receipt.expoTicketID == nil
                else { continue }
                state.journal[entry.receiptID] = entry
            }
            for id in batch.journalDeletes { state.journal[id] = nil }
        }
    }

    package func claimInstance(_ lease: InstanceLease, now: Date) async throws -> InstanceLease {
        state.withLock { state in
            if let current = state.instances[lease.instance], current.token != lease.token, current.leaseUntil > now {
                return current
            }
            state.instances[lease.instance] = lease
            return lease
        }
    }

    package func renewInstance(_ instance: String, token: String, until: Date) async throws -> Bool {
        state.withLock { state in
            guard state.instances[instance]?.token == token else { return false }
            state.instances[instance]?.leaseUntil = until
            return true
        }
    }

    package func releaseInstance(_ instance: String, token: String) async throws {
        state.withLock { state in
            if state.instances[instance]?.token == token { state.instances[instance] = nil }
        }
    }

    package func claimJournal(_ claim: JournalClaim) async throws -> [JournalEntry] {
        state.withLock { state in
            let claimable = state.journal.values
                .filter { $0.leaseUntil <= claim.now || (claim.includingOwn && $0.claimedBy == claim.instance) }
                .sorted { ($0.createdAt, $0.receiptID) < ($1.createdAt, $1.receiptID) }
                .prefix(max(0, claim.limit))
            for entry in claimable {
                state.journal[entry.receiptID]?.claimedBy = claim.instance
                state.journal[entry.receiptID]?.leaseUntil = claim.leaseUntil
                state.journal[entry.receiptID]?.attempts += 1
            }
            return Array(claimable)
        }
    }

    package func renewJournalLeases(receiptIDs: [String], instance: String, until: Date) async throws -> Int {
        state.withLock { state in
            var renewed = 0
            for id in Set(receiptIDs) where state.journal[id]?.claimedBy == instance {
                state.journal[id]?.leaseUntil = until
                renewed += 1
            }
            return renewed
        }
    }

    package func journalStatistics(tenantID: String?) async throws -> JournalStatistics {
        state.withLock { state in
            let entries = state.journal.values.filter { tenantID == nil || $0.tenantID == tenantID }
            return JournalStatistics(entries: entries.count, oldest: entries.map(\.createdAt).min())
        }
    }

    package func auditHead(chain: String) async throws -> AuditAnchor? {
        state.withLock { state in
            if let last = state.audit.filter({ $0.record.chain == chain }).max(by: { $0.record.seq < $1.record.seq }) {
                return AuditAnchor(chain: chain, seq: last.record.seq, link: last.record.link)
            }
            return state.anchors[chain]
        }
    }

    package func auditChains() async throws -> [String] {
        state.withLock { state in Set(state.audit.map(\.record.chain)).union(state.anchors.keys).sorted() }
    }

    package func auditAnchor(chain: String) async throws -> AuditAnchor? { state.withLock { $0.anchors[chain] } }

    package func auditRecords(chain: String, after position: Int64, limit: Int) async throws -> [StoredAuditRecord] {
        state.withLock { state in
            Array(state.audit.lazy.filter { $0.position > position && $0.record.chain == chain }.prefix(limit))
        }
    }

    package func auditRecords(matching filter: AuditFilter, after position: Int64, limit: Int) async throws
        -> [StoredAuditRecord]
    {
        state.withLock { state in
            Array(state.audit.lazy.filter { $0.position > position && filter.matches($0.record) }.prefix(limit))
        }
    }

    package func auditCheckpoints(chain: String) async throws -> [AuditCheckpoint] {
        state.withLock { state in
            state.checkpoints.filter { $0.chain == chain }.sorted { ($0.seq, $0.keyID) < ($1.seq, $1.keyID) }
        }
    }

    package func pruneAudit(to anchor: AuditAnchor) async throws -> Int {
        state.withLock { state in
            let before = state.audit.count
            state.audit.removeAll { $0.record.chain == anchor.chain && $0.record.seq <= anchor.seq }
            state.checkpoints.removeAll { $0.chain == anchor.chain && $0.seq < anchor.seq }
            if (state.anchors[anchor.chain]?.seq ?? .min) < anchor.seq { state.anchors[anchor.chain] = anchor }
            return before - state.audit.count
        }
    }

    package func createOperator(_ record: OperatorRecord) async throws {
        try state.withLock { state in
            guard state.operators[record.id] == nil,
                !state.operators.values.contains(where: { $0.name == record.name })
            else { throw StoreError.duplicate("operator \(record.name)") }
            state.operators[record.id] = record
        }
    }

    package func operatorRecord(id: String) async throws -> OperatorRecord? { state.withLock { $0.operators[id] } }

    package func operators() async throws -> [OperatorRecord] {
        state.withLock { $0.operators.values.sorted { ($0.createdAt, $0.name) < ($1.createdAt, $1.name) } }
    }

    package func updateOperator(_ record: OperatorRecord) async throws {
        try state.withLock { state in
            guard state.operators[record.id] != nil else { throw StoreError.notFound("operator \(record.id)") }
            state.operators[record.id]?.role = record.role
            state.operators[record.id]?.revokedAt = record.revokedAt
        }
    }

    package func usage(tenantID: String, fromDay: String) async throws -> [UsageRow] {
        state.withLock { state in
            state.usage
                .filter { $0.key.tenantID == tenantID && $0.key.day >= fromDay && !$0.value.isZero }
                .map { UsageRow(day: $0.key.day, provider: $0.key.provider, counts: $0.value, app: $0.key.app) }
                .sorted(by: UsageRow.reportOrder)
        }
    }

    package func takeCriticalReserve(tenantID: String, hour: Int64, count: Int, limit: Int) async throws -> Int {
        state.withLock { state in
            var hours = state.criticalReserve[tenantID, default: [:]]
            let used = hours[hour]
            if used == nil { hours = hours.filter { $0.key >= hour - Self.criticalReserveRetentionHours } }
            let granted = Self.criticalReserveGrant(count: count, limit: limit, used: used ?? 0)
            if granted > 0 { hours[hour] = (used ?? 0) + granted }
            state.criticalReserve[tenantID] = hours
            return granted
        }
    }

    package func criticalReserveUsed(tenantID: String, hour: Int64) async throws -> Int {
        state.withLock { $0.criticalReserve[tenantID]?[hour] ?? 0 }
    }

    package func fingerprintKey() async throws -> [UInt8] {
        state.withLock { state in
            if let key = state.fingerprintKey { return key }
            var generator = SystemRandomNumberGenerator()
            let key = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            state.fingerprintKey = key
            return key
        }
    }

    package func pendingExpoTickets(sentBefore: Date, limit: Int, app: String?) async throws -> [String] {
        state.withLock { state in
            state.receipts.values
                .filter { $0.status == .pending && $0.expoTicketID != nil && $0.createdAt < sentBefore }
                .filter { app == nil || $0.app == app }
                .sorted { $0.createdAt < $1.createdAt }
                .prefix(limit)
                .compactMap(\.expoTicketID)
        }
    }
}
