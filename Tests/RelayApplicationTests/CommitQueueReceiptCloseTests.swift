import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication

/// Expo receipts go through the commit queue: a close that finds its receipt already final (another relay on the
/// same database recorded it) fails only its own submission, and the rest of the round is committed without it,
/// with the audit chain unbroken.
@Suite(.timeLimit(.minutes(1)))
struct CommitQueueReceiptCloseTests {
    static let t0 = Date(timeIntervalSince1970: 1_750_000_000)

    static func receipt(_ id: String, status: ReceiptStatus) -> Receipt {
        Receipt(
            id: id, tenantID: "t1", keyID: "k1", provider: .expo, tokenFingerprint: "fp-\(id)", isCritical: false,
            status: status, expoTicketID: status == .pending ? "ticket-\(id)" : nil, createdAt: t0, updatedAt: t0,
            expiresAt: t0.addingTimeInterval(3600)
        )
    }

    static func close(_ id: String) -> StoreBatch {
        StoreBatch(receiptCloses: [
            ReceiptUpdate(id: id, status: .error, errorCode: "DeviceNotRegistered", updatedAt: t0)
        ])
    }

    static func entry(_ detail: String) -> AuditEntry {
        AuditEntry(timeMillis: AuditTime.millis(t0), event: .push, tenantID: "t1", outcome: "ok", detail: detail)
    }

    @Test func aCloseOfAFinalReceiptFailsAloneAndTheRoundIsCommittedWithoutIt() async throws {
        let store = MemoryStore()
        try await store.commit(
            StoreBatch(receipts: [Self.receipt("final", status: .ok), Self.receipt("open", status: .pending)]))
        let queue = CommitQueue(store: store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Three submissions gathered into one round before the writer starts.
            let late = Task { try await queue.submit(Self.close("final"), audit: [Self.entry("late close")]) }
            let first = Task { try await queue.submit(Self.close("open"), audit: [Self.entry("close")]) }
            let plain = Task {
                try await queue.submit(
                    StoreBatch(receipts: [Self.receipt("new", status: .ok)]), audit: [Self.entry("push")])
            }
            while queue.waitingSubmissions < 3 { await Task.yield() }
            group.addTask { try await queue.run() }

            await #expect(throws: StoreError.receiptsAlreadyFinal(["final"])) { try await late.value }
            try await first.value
            try await plain.value
            // The chain goes on from where the recommitted round left it.
            try await queue.submit(StoreBatch(), audit: [Self.entry("after")])
            queue.close()
            try await group.waitForAll()
        }
        let records = try await store.auditRecords(chain: "relay", after: 0, limit: 10).map(\.record)
        #expect(records.map(\.seq) == [1, 2, 3])
        #expect(records.map(\.detail) == ["close", "push", "after"])
        let found = try await store.receipts(ids: ["final", "open", "new"], tenantID: "t1")
        #expect(found.map(\.status) == [.ok, .error, .ok])
        #expect(found.first?.errorCode == nil)
    }
}
