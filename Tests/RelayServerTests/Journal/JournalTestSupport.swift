import Foundation
import Logging
import RelayCore
import RelayProviders
import RelayStore
import ServiceLifecycle
import Synchronization
import Testing

@testable import RelayApplication

/// A sender that records every push and holds each until released; a held send that is cancelled ends as a real
/// sender's does (the stream reset: outcome unknown, reported as unavailable).
final class HoldingSender: PushSender, SinglePushSender {
    private struct State {
        var sent: [ResolvedPush] = []
        var released: Bool
        var holders: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var next: UInt64 = 0
    }

    let provider: Provider
    private let state: Mutex<State>

    init(_ provider: Provider = .apns, holding: Bool = true) {
        self.provider = provider
        state = Mutex(State(released: !holding))
    }

    /// Every push it was given, in arrival order.
    var sent: [ResolvedPush] { state.withLock { $0.sent } }

    /// Lets every held send (and all later ones) finish, delivered.
    func release() {
        let holders = state.withLock { state in
            state.released = true
            defer { state.holders.removeAll() }
            return Array(state.holders.values)
        }
        for holder in holders { holder.resume(returning: true) }
    }

    /// Returns once `count` pushes have arrived.
    func waitForArrivals(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.sent.count >= count { return true }
                state.arrivalWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func send(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        var reports: [DeliveryReport] = []
        for push in pushes { reports.append(await send(push)) }
        return reports
    }

    func send(_ push: ResolvedPush) async -> DeliveryReport {
        let (id, arrived) = state.withLock { state in
            state.sent.append(push)
            let count = state.sent.count
            let arrived = state.arrivalWaiters.filter { $0.count <= count }.map(\.continuation)
            state.arrivalWaiters.removeAll { $0.count <= count }
            defer { state.next += 1 }
            return (state.next, arrived)
        }
        for waiter in arrived { waiter.resume() }
        let delivered = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool? in
                    if state.released { return true }
                    if Task.isCancelled { return false }
                    state.holders[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.holders.removeValue(forKey: id) }?.resume(returning: false)
        }
        guard delivered else {
            return DeliveryReport(outcome: .unavailable(reason: "stream reset", retryAfter: nil), attempts: 1)
        }
        let messageID = push.apnsID?.uuidString.lowercased() ?? "msg-\(push.token.suffix(6))"
        return DeliveryReport(outcome: .delivered(providerMessageID: messageID), attempts: 1, upstreamStatus: 200)
    }
}

/// A store in front of another that records every commit and can die: after ``kill()`` every call fails, as the
/// store of a process killed with SIGKILL no longer hears from it.
final class DyingStore: PushStore {
    let base: any PushStore
    private let state = Mutex<(dead: Bool, batches: [StoreBatch])>((false, []))

    init(_ base: any PushStore) {
        self.base = base
    }

    /// Every batch committed through this store, in order.
    var batches: [StoreBatch] { state.withLock { $0.batches } }

    func kill() { state.withLock { $0.dead = true } }

    private func alive() throws {
        if state.withLock({ $0.dead }) { throw StoreError.unavailable("the process is gone (test)") }
    }

    func commit(_ batch: StoreBatch) async throws {
        try alive()
        try await base.commit(batch)
        state.withLock { $0.batches.append(batch) }
    }

    func migrate() async throws { try await base.migrate() }
    func ping() async throws {
        try alive()
        try await base.ping()
    }
    func createTenant(_ tenant: Tenant) async throws { try await base.createTenant(tenant) }
    func tenant(id: String) async throws -> Tenant? {
        try alive()
        return try await base.tenant(id: id)
    }
    func tenant(named name: String) async throws -> Tenant? { try await base.tenant(named: name) }
    func tenants() async throws -> [Tenant] { try await base.tenants() }
    func updateTenant(_ tenant: Tenant) async throws { try await base.updateTenant(tenant) }
    func createKey(_ key: TenantKeyRecord) async throws { try await base.createKey(key) }
    func key(id: String) async throws -> TenantKeyRecord? {
        try alive()
        return try await base.key(id: id)
    }
    func keys(tenantID: String) async throws -> [TenantKeyRecord] { try await base.keys(tenantID: tenantID) }
    func updateKey(_ key: TenantKeyRecord) async throws { try await base.updateKey(key) }
    func markKeysUsed(_ ids: Set<String>, at date: Date) async throws {
        try alive()
        try await base.markKeysUsed(ids, at: date)
    }
    func receipts(ids: [String], tenantID: String) async throws -> [Receipt] {
        try alive()
        return try await base.receipts(ids: ids, tenantID: tenantID)
    }
    func pendingReceipt(expoTicketID: String) async throws -> Receipt? {
        try alive()
        return try await base.pendingReceipt(expoTicketID: expoTicketID)
    }
    func pendingExpoTickets(sentBefore: Date, limit: Int, app: String?) async throws -> [String] {
        try alive()
        return try await base.pendingExpoTickets(sentBefore: sentBefore, limit: limit, app: app)
    }
    func pruneReceipts(now: Date) async throws -> Int {
        try alive()
        return try await base.pruneReceipts(now: now)
    }
    func createOperator(_ record: OperatorRecord) async throws { try await base.createOperator(record) }
    func operatorRecord(id: String) async throws -> OperatorRecord? { try await base.operatorRecord(id: id) }
    func operators() async throws -> [OperatorRecord] { try await base.operators() }
    func updateOperator(_ record: OperatorRecord) async throws { try await base.updateOperator(record) }
    func usage(tenantID: String, fromDay: String) async throws -> [UsageRow] {
        try await base.usage(tenantID: tenantID, fromDay: fromDay)
    }
    func takeCriticalReserve(tenantID: String, hour: Int64, count: Int, limit: Int) async throws -> Int {
        try alive()
        return try await base.takeCriticalReserve(tenantID: tenantID, hour: hour, count: count, limit: limit)
    }
    func criticalReserveUsed(tenantID: String, hour: Int64) async throws -> Int {
        try alive()
        return try await base.criticalReserveUsed(tenantID: tenantID, hour: hour)
    }
    func auditHead(chain: String) async throws -> AuditAnchor? {
        try alive()
        return try await base.auditHead(chain: chain)
    }
    func auditChains() async throws -> [String] { try await base.auditChains() }
    func auditAnchor(chain: String) async throws -> AuditAnchor? { try await base.auditAnchor(chain: chain) }
    func auditRecords(chain: String, after position: Int64, limit: Int) async throws -> [StoredAuditRecord] {
        try await base.auditRecords(chain: chain, after: position, limit: limit)
    }
    func auditRecords(matching filter: AuditFilter, after position: Int64, limit: Int) async throws
        -> [StoredAuditRecord]
    {
        try await base.auditRecords(matching: filter, after: position, limit: limit)
    }
    func auditCheckpoints(chain: String) async throws -> [AuditCheckpoint] {
        try await base.auditCheckpoints(chain: chain)
    }
    func pruneAudit(to anchor: AuditAnchor) async throws -> Int { try await base.pruneAudit(to: anchor) }
    func fingerprintKey() async throws -> [UInt8] {
        try alive()
        return try await base.fingerprintKey()
    }
    func claimInstance(_ lease: InstanceLease, now: Date) async throws -> InstanceLease {
        try alive()
        return try await base.claimInstance(lease, now: now)
    }
    func renewInstance(_ instance: String, token: String, until: Date) async throws -> Bool {
        try alive()
        return try await base.renewInstance(instance, token: token, until: until)
    }
    func releaseInstance(_ instance: String, token: String) async throws {
        try alive()
        try await base.releaseInstance(instance, token: token)
    }
    func claimJournal(_ claim: JournalClaim) async throws -> [JournalEntry] {
        try alive()
        return try await base.claimJournal(claim)
    }
    func renewJournalLeases(receiptIDs: [String], instance: String, until: Date) async throws -> Int {
        try alive()
        return try await base.renewJournalLeases(receiptIDs: receiptIDs, instance: instance, until: until)
    }
    func journalStatistics(tenantID: String?) async throws -> JournalStatistics {
        try await base.journalStatistics(tenantID: tenantID)
    }
}

/// A relay over a store of the test's, with holding senders, one tenant and its key.
struct JournalRelay {
    let store: DyingStore
    let senders: [Provider: HoldingSender]
    let relay: Relay
    let identity: TenantIdentity
    let key: String

    static let logger = Logger(label: "journal-test") { _ in SwiftLogNoOpLogHandler() }

    /// - Parameters:
    ///   - tenant: The tenant already in `base`, with its key; a new one (`acme`) when `nil`.
    ///   - apps: Senders of apps other than `default`, by name (the relay's configuration then names them).
    init(
        on base: any PushStore,
        instance: String = "relay-1",
        chain: String? = nil,
        journalKey: JournalKey,
        holding: Bool = true,
        waitDeadline: Duration = .milliseconds(50),
        queue: DeliveryQueue? = nil,
        clock: RelayClock = .system,
        tenant: (Tenant, String)? = nil,
        apps: [String: [Provider: any PushSender]] = [:]
    ) async throws {
        store = DyingStore(base)
        senders = Dictionary(uniqueKeysWithValues: Provider.allCases.map { ($0, HoldingSender($0, holding: holding)) })
        relay = Relay(
            store: store,
            senders: senders.mapValues { $0 as any PushSender },
            apps: apps,
            settings: RelaySettings(waitDeadline: waitDeadline, apps: Set(apps.keys).union([AppName.default])),
            queue: queue ?? DeliveryQueue(clock: clock),
            commits: CommitQueue(store: store, settings: AuditLogSettings(chain: chain ?? instance), clock: clock),
            logger: Self.logger,
            clock: clock,
            journal: JournalSettings(key: journalKey, instance: instance)
        )
        let (made, key) = try await {
            if let tenant { return tenant }
            return try await TestRelay.addTenant(to: base, name: "acme", limits: .init(burst: 200))
        }()
        self.key = key
        identity = try await relay.authenticator.authenticate(key)
        _ = made
    }

    /// The tenant and key, for a second relay on the same store.
    var tenant: (Tenant, String) { (identity.tenant, key) }

    /// Pushes native messages (JSON text, one per element) as the native API would.
    func push(_ messages: [String], acceptance: Relay.Acceptance = .waitForOutcomes) async throws -> Relay.PushResult {
        var pushes: [ResolvedPush] = []
        for text in messages {
            var issues: [ValidationIssue] = []
            let message = try #require(
                PushMessage.parse(JSONValue.decode(Array(text.utf8)) ?? .null, at: .root, issues: &issues),
                "\(issues)")
            pushes += message.pushes
        }
        return try await relay.push(pushes, identity: identity, acceptance: acceptance, logger: Self.logger)
    }

    /// Runs `body` while the relay's commit and delivery queues run (without `deliveries`, only the commit queue:
    /// jobs then wait, never sent); then shuts them down gracefully (the delivery queue drains first) and waits.
    func running<T: Sendable>(deliveries: Bool = true, _ body: () async throws -> T) async throws -> T {
        let services: [any Service] = deliveries ? [relay.commits, relay.queue] : [relay.commits]
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [], logger: Self.logger)
        )
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            do {
                let result = try await body()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                for sender in senders.values { sender.release() }
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// The receipts of `ids`, in that order.
    func receipts(_ ids: [String]) async throws -> [Receipt] {
        let found = try await store.base.receipts(ids: ids, tenantID: identity.tenant.id)
        return ids.compactMap { id in found.first { $0.id == id } }
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs anywhere in these bytes.
    func windowsContain(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
