import Foundation
import RelayCore
import RelayStore
import Testing

/// The audit log's part of the store contract, on every store of ``StoreKind/all``.
@Suite(.timeLimit(.minutes(1)))
struct AuditStoreConformanceTests {
    /// `count` linked records of `chain`, every third for tenant-b and critical, one admin action with a rate.
    static func records(chain: String = "i1", count: Int, after head: AuditAnchor? = nil) -> [AuditRecord] {
        var writer = AuditChain(chain: chain, head: head)
        return (1...count).map { index in
            let entry =
                index == 2
                ? AuditEntry(
                    timeMillis: AuditTime.millis(Fixture.date(index)),
                    event: .admin,
                    tenantID: "tenant-a",
                    outcome: "tenant.update",
                    actor: "operator:alice",
                    before: .object(["rate": .double(10), "note": .null]),
                    after: .object(["rate": .double(0.5), "note": .string("ops, \"night\"")])
                )
                : AuditEntry(
                    timeMillis: AuditTime.millis(Fixture.date(index)),
                    event: .push,
                    tenantID: index % 3 == 0 ? "tenant-b" : "tenant-a",
                    keyID: "k1",
                    requestID: "req-\(index)",
                    client: "192.0.2.1",
                    provider: "apns",
                    tokenFingerprint: "fp\(index)",
                    critical: index % 3 == 0,
                    outcome: index % 5 == 0 ? "DeviceNotRegistered" : "ok",
                    upstreamStatus: index % 5 == 0 ? 410 : 200,
                    upstreamReason: index % 5 == 0 ? "Unregistered" : nil,
                    attempts: 1,
                    latencyMillis: index
                )
            return writer.append(entry.normalisedForStorage())
        }
    }

    @Test(arguments: StoreKind.all)
    func recordsRoundTripAndTheChainVerifies(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let records = Self.records(count: 20)
            try await store.commit(StoreBatch(audit: Array(records[..<7])))
            try await store.commit(StoreBatch(audit: Array(records[7...])))
            let stored = try await store.auditRecords(chain: "i1", after: 0, limit: 100)
            #expect(stored.map(\.record) == records)
            #expect(stored.map(\.position) == stored.map(\.position).sorted())
            #expect(try await store.auditHead(chain: "i1") == AuditAnchor(chain: "i1", seq: 20, link: records[19].link))
            #expect(try await store.auditHead(chain: "other") == nil)
            #expect(try await store.auditChains() == ["i1"])
            let verification = try await store.verifyAuditChain("i1", pageSize: 6)
            #expect(verification.isIntact)
            #expect(verification.recordsVerified == 20)
        }
    }

    @Test(arguments: StoreKind.all)
    func queriesFilterAndPageByPosition(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let records = Self.records(count: 30)
            try await store.commit(StoreBatch(audit: records))
            let filter = AuditFilter(
                tenantID: "tenant-b", since: Fixture.date(4), until: Fixture.date(27), critical: true)
            let expected = records.filter(filter.matches)
            #expect(expected.count == 7)  // seq 6, 9, …, 24
            var seen: [AuditRecord] = []
            var cursor: Int64 = 0
            while true {
                let page = try await store.auditRecords(matching: filter, after: cursor, limit: 3)
                seen += page.map(\.record)
                guard let last = page.last else { break }
                cursor = last.position
            }
            #expect(seen == expected)
            let dead = try await store.auditRecords(
                matching: AuditFilter(outcome: "DeviceNotRegistered", event: .push),
                after: 0,
                limit: 100
            )
            #expect(dead.map(\.record.seq) == [5, 10, 15, 20, 25, 30])
        }
    }

    @Test(arguments: StoreKind.all)
    func checkpointsAreKeptOnceAndVerifyWithThePublicKey(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let key = AuditSigningKey.generate()
            let records = Self.records(count: 10)
            let checkpoint = key.checkpoint(chain: "i1", seq: 10, link: records[9].link, time: Fixture.date(11))
            try await store.commit(StoreBatch(audit: records, checkpoints: [checkpoint]))
            try await store.commit(StoreBatch(checkpoints: [checkpoint]))
            #expect(try await store.auditCheckpoints(chain: "i1") == [checkpoint])
            let verification = try await store.verifyAuditChain("i1", publicKey: key.publicKey, requireSignedEnd: true)
            #expect(verification.isIntact)
            #expect(verification.checkpointsVerified == 1)
            let otherKey = AuditSigningKey.generate().publicKey
            #expect(try await store.verifyAuditChain("i1", publicKey: otherKey).problem?.kind == .badCheckpoint)
        }
    }

    @Test(arguments: StoreKind.all)
    func pruningKeepsTheRestVerifiableFromItsAnchor(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let key = AuditSigningKey.generate()
            let records = Self.records(count: 12)
            let atEight = key.checkpoint(chain: "i1", seq: 8, link: records[7].link, time: Fixture.date(9))
            let atFour = key.checkpoint(chain: "i1", seq: 4, link: records[3].link, time: Fixture.date(5))
            try await store.commit(StoreBatch(audit: records, checkpoints: [atFour, atEight]))
            let anchor = AuditAnchor(chain: "i1", seq: 8, link: records[7].link)
            #expect(try await store.pruneAudit(to: anchor) == 8)
            #expect(try await store.auditAnchor(chain: "i1") == anchor)
            #expect(try await store.auditCheckpoints(chain: "i1") == [atEight])
            #expect(
                try await store.auditRecords(chain: "i1", after: 0, limit: 100).map(\.record.seq) == [9, 10, 11, 12])
            let verification = try await store.verifyAuditChain("i1", publicKey: key.publicKey)
            #expect(verification.isIntact)
            #expect(verification.recordsVerified == 4)

            // Everything pruned: the head is the anchor, and the chain continues from it.
            let all = AuditAnchor(chain: "i1", seq: 12, link: records[11].link)
            #expect(try await store.pruneAudit(to: all) == 4)
            #expect(try await store.auditHead(chain: "i1") == all)
            #expect(try await store.auditChains() == ["i1"])
            try await store.commit(StoreBatch(audit: Self.records(count: 2, after: all)))
            #expect(try await store.verifyAuditChain("i1").recordsVerified == 2)
            #expect(try await store.verifyAuditChain("i1").isIntact)
        }
    }

    @Test(arguments: StoreKind.all)
    func chainsOfSeveralInstancesStaySeparate(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = Self.records(chain: "i1", count: 5)
            let second = Self.records(chain: "i2", count: 3)
            // Interleaved, as two instances writing to one database would.
            try await store.commit(StoreBatch(audit: Array(first[..<2]) + Array(second[..<2])))
            try await store.commit(StoreBatch(audit: Array(first[2...]) + Array(second[2...])))
            #expect(try await store.auditChains() == ["i1", "i2"])
            #expect(try await store.auditHead(chain: "i2")?.seq == 3)
            #expect(try await store.verifyAuditChain("i1").isIntact)
            #expect(try await store.verifyAuditChain("i2").recordsVerified == 3)
        }
    }
}
