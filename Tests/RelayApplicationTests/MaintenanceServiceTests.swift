import Foundation
import Logging
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication

/// The maintenance service on the relay's clock: each round runs when the clock has moved by the interval, and
/// judges what expired by the clock's date.
@Suite(.timeLimit(.minutes(1)))
struct MaintenanceServiceTests {
    static func receipt(_ id: String, expiresAt: Date) -> Receipt {
        Receipt(
            id: id, tenantID: "tenant", keyID: "key", provider: .apns, tokenFingerprint: "fp", isCritical: false,
            status: .ok, createdAt: expiresAt, updatedAt: expiresAt, expiresAt: expiresAt
        )
    }

    @Test func expiredReceiptsArePrunedAndKeyUseIsWrittenEachIntervalOfTheClock() async throws {
        let clock = ManualClock()
        let start = clock.date
        let store = MemoryStore()
        let relay = Relay(store: store, senders: [:], clock: .manual(clock))
        let tenant = Tenant(name: "acme", createdAt: start)
        try await store.createTenant(tenant)
        let issued = TenantKeys.issue()
        try await store.createKey(
            TenantKeyRecord(id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash, createdAt: start)
        )
        let ids = ["expired", "in-30-s", "in-90-s"]
        try await store.commit(
            StoreBatch(receipts: [
                Self.receipt(ids[0], expiresAt: start.addingTimeInterval(-1)),
                Self.receipt(ids[1], expiresAt: start.addingTimeInterval(30)),
                Self.receipt(ids[2], expiresAt: start.addingTimeInterval(90)),
            ])
        )
        let service = MaintenanceService(relay: relay, interval: .seconds(60), logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            // The first round runs at start; then the service sleeps on the clock.
            await clock.waitForSleepers()
            #expect(try await store.receipts(ids: ids, tenantID: "tenant").map(\.id) == [ids[1], ids[2]])

            _ = try await relay.authenticator.authenticate(issued.key)
            // Not yet a round: the receipt that expired at 30 s stays.
            clock.advance(by: .seconds(59))
            #expect(clock.sleeperCount == 1)
            #expect(try await store.receipts(ids: ids, tenantID: "tenant").map(\.id) == [ids[1], ids[2]])

            clock.advance(by: .seconds(1))
            // The advance woke the service; it sleeps again once its round is over.
            await clock.waitForSleepers()
            #expect(try await store.receipts(ids: ids, tenantID: "tenant").map(\.id) == [ids[2]])
            #expect(try await store.key(id: issued.id)?.lastUsedAt == start.addingTimeInterval(60))
            group.cancelAll()
        }
    }
}
