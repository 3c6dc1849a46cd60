import Foundation
import RelayCore
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication
@testable import RelayServer

/// `pushrelay audit archive` and `audit verify --archive`: closed ranges move to a signed file, the store keeps the
/// rest, and the archives and the live chain verify together; an edited archive is refused.
@Suite(.timeLimit(.minutes(1)))
struct CLIAuditArchiveTests {
    /// Archive what is older than 30 days.
    static let cutoff = AuditFixtures.now.addingTimeInterval(-30 * 86_400)

    /// "relay-1": 12 records 40 days old (a checkpoint after the 6th), then 8 a day old (a checkpoint after the last);
    /// "relay-2": 5 records 40 days old and 3 a day old, signed at the end.
    static func fill(_ store: any PushStore, key: AuditSigningKey) async throws -> [AuditRecord] {
        let old = AuditFixtures.times(count: 12, daysAgo: 40)
        var records = try await AuditFixtures.appendPushes(
            to: store, chain: "relay-1", times: Array(old[0..<6]), signedBy: key)
        records += try await AuditFixtures.appendPushes(to: store, chain: "relay-1", times: Array(old[6...]))
        records += try await AuditFixtures.appendPushes(
            to: store, chain: "relay-1", times: AuditFixtures.times(count: 8, daysAgo: 1), signedBy: key)
        try await AuditFixtures.appendPushes(
            to: store, chain: "relay-2", times: AuditFixtures.times(count: 5, daysAgo: 40), tenantID: "tenant-b")
        try await AuditFixtures.appendPushes(
            to: store, chain: "relay-2", times: AuditFixtures.times(count: 3, daysAgo: 1), tenantID: "tenant-b",
            signedBy: key)
        return records
    }

    static func archive(_ store: any PushStore, key: AuditSigningKey) -> AuditArchive {
        AuditArchive(store: store, signingKey: key, pageSize: 4) { AuditFixtures.now }
    }

    /// Reads `paths` and joins them with the store; also verifies the store's chains as `audit verify` does.
    static func verify(
        _ paths: [String], store: any PushStore, key: AuditSigningKey
    ) async throws -> (files: [AuditArchiveFile], joins: [AuditArchiveCheck.Join], store: [AuditVerification]) {
        let files = try paths.map { try AuditArchiveFile.read(path: $0, publicKey: key.publicKey) }
        let joins = try await AuditArchiveCheck.join(files, store: store)
        var chains: [AuditVerification] = []
        for chain in try await store.auditChains() {
            chains.append(try await store.verifyAuditChain(chain, publicKey: key.publicKey))
        }
        return (files, joins, chains)
    }

    @Test(arguments: CLIStoreKind.available)
    func anArchiveAndTheLiveChainVerifyTogether(kind: CLIStoreKind) async throws {
        try await kind.withStore { store in
            let folder = try ConfigurationFolder()
            defer { folder.remove() }
            let key = AuditSigningKey.generate()
            let records = try await Self.fill(store, key: key)
            let path = folder.file("2026-archive.jsonl")

            let outcome = try await Self.archive(store, key: key).run(before: Self.cutoff, to: path)
            #expect(outcome.cuts.map(\.chain) == ["relay-1", "relay-2"])
            #expect(outcome.cuts.map(\.span) == ["records 1…12", "records 1…5"])
            #expect(outcome.cuts.first?.anchor == AuditAnchor(chain: "relay-1", seq: 12, link: records[11].link))

            // The store no longer holds the archived records, and the cut is its signed anchor.
            #expect(
                try await store.auditRecords(chain: "relay-1", after: 0, limit: 100).map(\.record.seq) == Array(13...20)
            )
            #expect(
                try await store.auditRecords(chain: "relay-2", after: 0, limit: 100).map(\.record.seq) == [6, 7, 8])
            #expect(try await store.auditAnchor(chain: "relay-1")?.seq == 12)
            #expect(try await store.auditCheckpoints(chain: "relay-1").map(\.seq).contains(12))

            let (files, joins, chains) = try await Self.verify([path], store: store, key: key)
            let file = try #require(files.first)
            #expect(file.result.isIntact, "\(AuditExportCheck.report(file.result))")
            #expect(file.sha256 == outcome.sha256)
            #expect(file.result.sections.map(\.recordsVerified) == [12, 5])
            #expect(file.result.sections.map(\.exportCheckpointsVerified) == [0, 0], "the cut is a relay checkpoint")
            #expect(joins.map(\.chain) == ["relay-1", "relay-2"])
            #expect(joins.allSatisfy { $0.isJoined }, "\(joins.map(\.line))")
            #expect(joins.allSatisfy { $0.notes.isEmpty })
            #expect(
                joins.first?.line
                    == "chain relay-1: archived records 1…12 (\(path)), the store continues from seq 13: joined")
            #expect(chains.allSatisfy { $0.isIntact })
            #expect(chains.first?.firstSeq == 13)

            // The chain goes on after the cut, and still verifies.
            try await AuditFixtures.appendPushes(to: store, chain: "relay-1", times: [AuditFixtures.now], signedBy: key)
            #expect(
                try await store.verifyAuditChain("relay-1", publicKey: key.publicKey, requireSignedEnd: true).isIntact)
        }
    }

    @Test func anEditedArchiveIsRefusedNamingTheChainAndSeq() async throws {
        let store = MemoryStore()
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let key = AuditSigningKey.generate()
        _ = try await Self.fill(store, key: key)
        let path = folder.file("archive.jsonl")
        _ = try await Self.archive(store, key: key).run(before: Self.cutoff, to: path)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        func isRecord(_ line: String, seq: Int, chain: String = "relay-1") -> Bool {
            line.hasPrefix(#"{"record":"#) && line.contains("\"chain\":\"\(chain)\"")
                && line.contains("\"seq\":\(seq),")
        }

        /// The one problem verifying the edited lines with the store finds.
        func problem(_ edited: [String], _ name: String) async throws -> (AuditProblem?, String?) {
            let tampered = try folder.write(name, edited.joined(separator: "\n") + "\n")
            let (files, joins, _) = try await Self.verify([tampered], store: store, key: key)
            #expect(!(files.first?.result.isIntact ?? true))
            return (files.first?.result.sections.first?.problem, joins.first?.problem)
        }

        // A field of a record.
        var changed = lines
        let target = try #require(lines.firstIndex { isRecord($0, seq: 7) })
        changed[target] = changed[target].replacingOccurrences(of: "\"latencyMillis\":12", with: "\"latencyMillis\":13")
        #expect(changed != lines)
        let (modified, modifiedJoin) = try await problem(changed, "changed.jsonl")
        #expect(modified?.kind == .modified && modified?.seq == 7)
        #expect(modifiedJoin?.contains("NOT INTACT at seq 7: record seq 7 of chain relay-1") == true)

        // A record dropped.
        var dropped = lines
        dropped.removeAll { isRecord($0, seq: 3) }
        #expect(dropped.count == lines.count - 1)
        let (deleted, deletedJoin) = try await problem(dropped, "dropped.jsonl")
        #expect(deleted?.kind == .deleted && deleted?.seq == 3)
        #expect(deletedJoin?.contains("of chain relay-1") == true)

        // The signature of the checkpoint at the cut.
        var resigned = lines
        let cut = try #require(lines.firstIndex { $0.hasPrefix(#"{"checkpoint":"#) && $0.contains("\"seq\":12,") })
        let signature = try #require(resigned[cut].range(of: "\"signature\":\""))
        let digit = resigned[cut][signature.upperBound]
        resigned[cut].replaceSubrange(
            signature.upperBound...signature.upperBound, with: digit == "0" ? "1" : "0")
        let (badCheckpoint, _) = try await problem(resigned, "resigned.jsonl")
        #expect(badCheckpoint?.kind == .badCheckpoint && badCheckpoint?.seq == 12)
        #expect(badCheckpoint?.message.contains("chain relay-1") == true)

        // The untouched file still verifies with the store.
        let (files, joins, _) = try await Self.verify([path], store: store, key: key)
        #expect(files.allSatisfy { $0.result.isIntact } && joins.allSatisfy { $0.isJoined })
    }

    @Test(arguments: CLIStoreKind.available)
    func aSecondArchiveContinuesTheFirst(kind: CLIStoreKind) async throws {
        try await kind.withStore { store in
            let folder = try ConfigurationFolder()
            defer { folder.remove() }
            let key = AuditSigningKey.generate()
            _ = try await Self.fill(store, key: key)
            let first = folder.file("first.jsonl")
            let second = folder.file("second.jsonl")
            _ = try await Self.archive(store, key: key).run(before: Self.cutoff, to: first)
            // Twelve hours ago: the rest of both chains.
            let outcome = try await Self.archive(store, key: key).run(
                before: AuditFixtures.now.addingTimeInterval(-12 * 3_600), to: second)
            #expect(outcome.cuts.map(\.span) == ["records 13…20", "records 6…8"])
            // Records written after the second archive go on from its cut.
            try await AuditFixtures.appendPushes(
                to: store, chain: "relay-1", times: [AuditFixtures.now, AuditFixtures.now], signedBy: key)

            // In any order.
            let (files, joins, chains) = try await Self.verify([second, first], store: store, key: key)
            #expect(files.allSatisfy { $0.result.isIntact })
            #expect(joins.allSatisfy { $0.isJoined }, "\(joins.map(\.line))")
            #expect(joins.first?.parts.map(\.file) == [first, second])
            #expect(joins.first?.storeAnchor?.seq == 20)
            #expect(chains.allSatisfy { $0.isIntact })
            #expect(chains.first?.firstSeq == 21)

            // The second alone joins the store, and says that the records before it are in no archive given.
            let (_, alone, _) = try await Self.verify([second], store: store, key: key)
            #expect(alone.allSatisfy { $0.isJoined })
            #expect(alone.first?.notes.first?.contains("records 1…12 are in no archive given") == true)

            // The first alone does not: records 13…20 are in neither it nor the store.
            let (_, gap, _) = try await Self.verify([first], store: store, key: key)
            #expect(
                gap.first?.problem?.hasPrefix("records 13…20 of chain relay-1 are neither in the archives") == true)
        }
    }

    @Test func anArchiveIsNeverOverwritten() async throws {
        let store = MemoryStore()
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let key = AuditSigningKey.generate()
        _ = try await Self.fill(store, key: key)
        let path = try folder.write("archive.jsonl", "kept\n")
        let checkpoints = try await store.auditCheckpoints(chain: "relay-1")

        await #expect(throws: LineFileWriter.Failure.self) {
            _ = try await Self.archive(store, key: key).run(before: Self.cutoff, to: path)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "kept\n")
        #expect(try await store.auditAnchor(chain: "relay-1") == nil)
        #expect(try await store.auditRecords(chain: "relay-1", after: 0, limit: 100).count == 20)
        #expect(try await store.auditCheckpoints(chain: "relay-1") == checkpoints, "nothing was signed either")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["archive.jsonl"])
    }

    @Test func aPlanChangesNothingAndAnEmptyRangeWritesNoFile() async throws {
        let store = MemoryStore()
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let key = AuditSigningKey.generate()
        _ = try await Self.fill(store, key: key)
        let archive = Self.archive(store, key: key)

        let cuts = try await archive.plan(before: Self.cutoff)
        #expect(cuts.map(\.records) == [12, 5])
        #expect(try await store.auditAnchor(chain: "relay-1") == nil)
        #expect(try await store.auditRecords(chain: "relay-1", after: 0, limit: 100).count == 20)

        let path = folder.file("archive.jsonl")
        let outcome = try await archive.run(before: AuditFixtures.now.addingTimeInterval(-50 * 86_400), to: path)
        #expect(outcome == AuditArchive.Outcome(cuts: [], sha256: nil))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func anAlteredStoreIsNotArchived() async throws {
        let store = MemoryStore()
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let key = AuditSigningKey.generate()
        let records = try await Self.fill(store, key: key)
        let checkpoints = try await store.auditCheckpoints(chain: "relay-1")
        // A record whose link does not fit, appended behind the writer's back before the cut.
        var forged = AuditChain(chain: "relay-2", head: AuditAnchor(chain: "relay-2", seq: 8, link: records[3].link))
        try await store.commit(
            StoreBatch(audit: [forged.append(AuditEntry(timeMillis: AuditTime.millis(Self.cutoff) - 1, event: .push))]))
        let path = folder.file("archive.jsonl")
        await #expect(throws: AuditExport.Failure.self) {
            _ = try await Self.archive(store, key: key).run(before: AuditFixtures.now, to: path)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try await store.auditAnchor(chain: "relay-1") == nil)
        #expect(try await store.auditAnchor(chain: "relay-2") == nil)
        #expect(try await store.auditCheckpoints(chain: "relay-1") == checkpoints, "nothing was signed")
    }

    @Test func anInterruptedArchiveLeavesAnOverlapThatStillVerifies() async throws {
        let store = PruneFailingStore()
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let key = AuditSigningKey.generate()
        _ = try await Self.fill(store, key: key)
        let path = folder.file("archive.jsonl")
        // relay-1 is pruned, relay-2 is not: the file is whole and verified, and the store still holds relay-2's part.
        store.failing.withLock { $0 = ["relay-2"] }
        await #expect(throws: AuditArchive.Failure.self) {
            _ = try await Self.archive(store, key: key).run(before: Self.cutoff, to: path)
        }
        #expect(try await store.auditAnchor(chain: "relay-1")?.seq == 12)
        #expect(try await store.auditAnchor(chain: "relay-2") == nil)

        let (files, joins, chains) = try await Self.verify([path], store: store, key: key)
        #expect(files.first?.result.isIntact == true)
        #expect(joins.allSatisfy { $0.isJoined }, "\(joins.map(\.line))")
        #expect(
            joins.last?.notes == [
                "chain relay-2: records 1…5 are both in \(path) and in the store (the archive's "
                    + "pruning did not finish)"
            ])
        #expect(chains.allSatisfy { $0.isIntact })

        // Had the store's copy been rewritten, the seam would not fit.
        let other = MemoryStore()
        try await AuditFixtures.appendPushes(
            to: other, chain: "relay-2", times: AuditFixtures.times(count: 6, daysAgo: 40), tenantID: "tenant-c")
        let (_, foreign, _) = try await Self.verify([path], store: other, key: key)
        #expect(foreign.first?.problem?.hasPrefix("the store holds no chain relay-1") == true)
        #expect(foreign.last?.problem == "record seq 5 of chain relay-2 in the store differs from the one in \(path)")
    }

    @Test func theArchiveRecordNamesTheFileAndItsHash() {
        let cut = AuditCut(
            chain: "relay-1", firstSeq: 1, anchor: AuditAnchor(chain: "relay-1", seq: 12, link: AuditChain.genesisLink),
            records: 12, cutoffMillis: AuditTime.millis(Self.cutoff))
        let entry = AuditArchive.entry(
            for: cut, file: "audit-2026.jsonl", sha256: "ab12", actor: "cli:alice", time: AuditFixtures.now)
        #expect(entry.event == .retention && entry.outcome == "audit.archive" && entry.actor == "cli:alice")
        #expect(
            entry.detail
                == "archived records 1…12 of chain relay-1 (before 2026-12-16T08:00:00.000Z) to audit-2026.jsonl, "
                + "sha256 ab12")
        #expect(entry.after?.objectValue?["sha256"] == .string("ab12"))
        #expect(entry.after?.objectValue?["lastSeq"] == .int(12))
    }
}

/// A memory store whose pruning of the chains named in ``failing`` fails, as an interrupted archive's would.
final class PruneFailingStore: ForwardingPushStore {
    let base = MemoryStore()
    let failing = Mutex<Set<String>>([])

    func pruneAudit(to anchor: AuditAnchor) async throws -> Int {
        if failing.withLock({ $0.contains(anchor.chain) }) { throw StoreError.unavailable("pruning fails (test)") }
        return try await base.pruneAudit(to: anchor)
    }
}
