import Foundation
import Logging
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Pruning to `[audit] retention_days` keeps what remains verifiable.
@Suite(.timeLimit(.minutes(1)))
struct CLIAuditRetentionTests {
    static let retentionDays = 30
    static let retention = Double(retentionDays) * 86_400

    /// 12 records 40 days old (checkpoint after the 6th), then 8 records a day old (checkpoint after the last).
    static func fill(_ store: any PushStore, chain: String, key: AuditSigningKey?) async throws -> [AuditRecord] {
        let old = AuditFixtures.times(count: 12, daysAgo: 40)
        var records = try await AuditFixtures.appendPushes(
            to: store, chain: chain, times: Array(old[0..<6]), signedBy: key)
        records += try await AuditFixtures.appendPushes(to: store, chain: chain, times: Array(old[6...]))
        records += try await AuditFixtures.appendPushes(
            to: store, chain: chain, times: AuditFixtures.times(count: 8, daysAgo: 1), signedBy: key
        )
        return records
    }

    @Test(arguments: CLIStoreKind.available)
    func pruningKeepsTheChainVerifiable(kind: CLIStoreKind) async throws {
        try await kind.withStore { store in
            let key = AuditSigningKey.generate()
            let records = try await Self.fill(store, chain: "relay-1", key: key)
            let retention = AuditRetention(store: store, retention: Self.retention, signingKey: key, pageSize: 5)

            // A dry run changes nothing.
            let planned = try await retention.run(now: AuditFixtures.now, dryRun: true)
            #expect(planned.count == 1)
            let plan = try #require(planned.first)
            #expect((plan.chain, plan.firstSeq, plan.anchor.seq, plan.records) == ("relay-1", 1, 12, 12))
            #expect(plan.anchor.link == records[11].link)
            #expect(try await store.auditAnchor(chain: "relay-1") == nil)

            let pruned = try await retention.run(now: AuditFixtures.now)
            #expect(pruned == planned)
            #expect(try await store.auditAnchor(chain: "relay-1") == plan.anchor)
            #expect(
                try await store.auditRecords(chain: "relay-1", after: 0, limit: 100).map(\.record.seq) == Array(13...20)
            )
            // The anchor is signed, so an auditor can check where the chain now starts.
            #expect(try await store.auditCheckpoints(chain: "relay-1").map(\.seq).contains(12))

            let verification = try await store.verifyAuditChain(
                "relay-1", publicKey: key.publicKey, requireSignedEnd: true
            )
            #expect(verification.isIntact, "\(String(describing: verification.problem))")
            #expect((verification.firstSeq, verification.lastSeq) == (13, 20))

            // Nothing left to prune; an export of what remains still verifies.
            #expect(try await retention.run(now: AuditFixtures.now).isEmpty)
            var lines: [String] = []
            let sections = try await AuditExport(store: store, since: .distantPast, until: nil, signingKey: key)
                .write(to: { lines.append($0) })
            #expect(sections.first?.anchor == plan.anchor)
            #expect(AuditExportCheck.verify(lines: lines, publicKey: key.publicKey).isIntact)
        }
    }

    @Test func withoutASigningKeyPruningStillVerifies() async throws {
        try await CLIStoreKind.sqlite.withStore { store in
            _ = try await Self.fill(store, chain: "relay-1", key: nil)
            let retention = AuditRetention(store: store, retention: Self.retention, signingKey: nil)
            #expect(try await retention.run(now: AuditFixtures.now).map(\.records) == [12])
            #expect(try await store.verifyAuditChain("relay-1").isIntact)
        }
    }

    @Test func onlyTheNamedChainsArePrunedAndOnlyAnUnbrokenOldPrefix() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        _ = try await Self.fill(store, chain: "relay-1", key: key)
        _ = try await Self.fill(store, chain: "relay-2", key: key)
        // A record stamped 40 days ago after the new ones (a clock stepped back) stays: only a prefix can go.
        try await AuditFixtures.appendPushes(
            to: store, chain: "relay-1", times: [AuditFixtures.now.addingTimeInterval(-40 * 86_400)])
        let retention = AuditRetention(store: store, retention: Self.retention, signingKey: key, chains: ["relay-1"])
        let plans = try await retention.run(now: AuditFixtures.now)
        #expect(plans.map(\.chain) == ["relay-1"])
        #expect(plans.first?.anchor.seq == 12)
        #expect(try await store.auditAnchor(chain: "relay-2") == nil)
        #expect(try await store.verifyAuditChain("relay-1", publicKey: key.publicKey).isIntact)
    }

    @Test func theRetentionRecordSaysWhatWent() throws {
        let plan = AuditRetention.Plan(
            chain: "relay-1", firstSeq: 1, anchor: AuditAnchor(chain: "relay-1", seq: 12, link: AuditChain.genesisLink),
            records: 12, cutoffMillis: AuditTime.millis(AuditFixtures.now)
        )
        let entry = AuditRetention.entry(for: plan, actor: "cli:alice", retentionDays: 30, time: AuditFixtures.now)
        #expect(entry.event == .retention && entry.actor == "cli:alice" && entry.outcome == "audit.prune")
        #expect(
            entry.detail
                == "pruned records 1…12 of chain relay-1 (older than 30 days, before 2027-01-15T08:00:00.000Z)"
        )
        #expect(entry.after?.objectValue?["lastSeq"] == .int(12))
    }

    @Test func theMaintenanceServicePrunesAtStartAndRecordsItInTheRelayChain() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        // The service prunes against the relay's clock.
        let clock = ManualClock()
        let old = (0..<3).map { clock.date.addingTimeInterval(-40 * 86_400 + Double($0)) }
        try await AuditFixtures.appendPushes(to: store, chain: "relay-1:cli", times: old, signedBy: key)
        let commits = CommitQueue(
            store: store, settings: AuditLogSettings(chain: "relay-1", signingKey: key, checkpointInterval: .zero),
            clock: .manual(clock)
        )
        let relay = Relay(store: store, senders: [:], commits: commits, clock: .manual(clock))
        let retention = AuditRetention(
            store: store, retention: Self.retention, signingKey: key, chains: ["relay-1", "relay-1:cli"]
        )
        let service = MaintenanceService(relay: relay, auditRetention: retention, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await commits.run() }
            await service.pruneAudit(retention)
            commits.close()
            try await group.waitForAll()
        }
        #expect(try await store.auditAnchor(chain: "relay-1:cli")?.seq == 3)
        let written = try await store.auditRecords(chain: "relay-1", after: 0, limit: 10).map(\.record)
        #expect(written.map(\.event) == [.retention])
        #expect(written.first?.detail?.contains("of chain relay-1:cli") == true)
        #expect(try await store.verifyAuditChain("relay-1", publicKey: key.publicKey, requireSignedEnd: true).isIntact)
        #expect(try await store.verifyAuditChain("relay-1:cli", publicKey: key.publicKey).isIntact)
    }
}
