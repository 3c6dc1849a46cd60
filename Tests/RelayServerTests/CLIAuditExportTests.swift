import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// `pushrelay audit export` and `audit verify --export`: an export verifies with the public key alone, and any edit
/// is named.
@Suite(.timeLimit(.minutes(1)))
struct CLIAuditExportTests {
    /// Two chains, one record a minute: "relay-1" with 30 records (a checkpoint after the 10th) ending an hour before
    /// ``AuditFixtures/now``, and "relay-2" with 5 ending ten minutes earlier than that.
    static func fill(_ store: any PushStore, key: AuditSigningKey) async throws -> [AuditRecord] {
        let times = AuditFixtures.times(count: 30, daysAgo: 1.0 / 24)
        var records = try await AuditFixtures.appendPushes(
            to: store, chain: "relay-1", times: Array(times[0..<10]), signedBy: key
        )
        records += try await AuditFixtures.appendPushes(to: store, chain: "relay-1", times: Array(times[10...]))
        try await AuditFixtures.appendPushes(
            to: store, chain: "relay-2", times: AuditFixtures.times(count: 5, daysAgo: 1.0 / 24 + 10.0 / 1_440),
            tenantID: "tenant-b"
        )
        return records
    }

    static func export(
        _ store: any PushStore, since: Date, until: Date? = nil, key: AuditSigningKey?
    ) async throws -> (lines: [String], sections: [AuditExport.Section]) {
        var lines: [String] = []
        let export = AuditExport(store: store, since: since, until: until, signingKey: key, pageSize: 4) {
            AuditFixtures.now
        }
        let sections = try await export.write(to: { lines.append($0) })
        return (lines, sections)
    }

    @Test(arguments: CLIStoreKind.available)
    func anExportVerifiesWithThePublicKeyAlone(kind: CLIStoreKind) async throws {
        try await kind.withStore { store in
            let key = AuditSigningKey.generate()
            let records = try await Self.fill(store, key: key)
            // From the 6th record of relay-1 (the anchor is the 5th) to before the 26th.
            let (lines, sections) = try await Self.export(
                store, since: records[5].time, until: records[25].time, key: key
            )
            #expect(sections.count == 2)
            let first = try #require(sections.first)
            #expect(first.chain == "relay-1")
            #expect(first.anchor == AuditAnchor(chain: "relay-1", seq: 5, link: records[4].link))
            #expect((first.firstSeq, first.lastSeq, first.records) == (6, 25, 20))
            #expect(first.checkpoints == 2, "the stored one at seq 10 and the fresh one at seq 25")
            #expect(sections.allSatisfy { $0.signedEnd })
            #expect(first.signedAtExport, "seq 25 was signed by the export, not the relay")
            #expect(lines.filter { $0.hasPrefix(#"{"exportCheckpoint":"#) }.count == sections.count)
            #expect(sections.last?.records == 5)

            let result = AuditExportCheck.verify(lines: lines, publicKey: key.publicKey)
            #expect(result.isIntact, "\(AuditExportCheck.report(result))")
            #expect(result.sections.map(\.recordsVerified) == [20, 5])
            #expect(result.sections.map(\.exportCheckpointsVerified) == [1, 1])
            #expect(result.sections.first?.checkpointsVerified == 1, "the relay's own, at seq 10")
            #expect(AuditExportCheck.report(result).first?.hasPrefix("chain relay-1: intact, records 6…25") == true)

            let otherKey = AuditSigningKey.generate().publicKey
            #expect(!AuditExportCheck.verify(lines: lines, publicKey: otherKey).isIntact)
        }
    }

    @Test func aChangedFieldIsNamedBySeq() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let records = try await Self.fill(store, key: key)
        let (lines, _) = try await Self.export(store, since: records[0].time, key: key)
        let target = try #require(lines.firstIndex { $0.contains("\"seq\":7,") && $0.hasPrefix("{\"record\"") })
        var tampered = lines
        tampered[target] = tampered[target].replacingOccurrences(
            of: "\"latencyMillis\":12", with: "\"latencyMillis\":13")
        #expect(tampered[target] != lines[target])
        let result = AuditExportCheck.verify(lines: tampered, publicKey: key.publicKey)
        #expect(!result.isIntact)
        let problem = try #require(result.sections.first?.problem)
        #expect(problem.kind == .modified && problem.seq == 7)
        #expect(AuditExportCheck.report(result).first?.contains("NOT INTACT at seq 7") == true)
    }

    @Test func aDeletedLineIsNamedBySeq() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let records = try await Self.fill(store, key: key)
        let (lines, _) = try await Self.export(store, since: records[0].time, key: key)
        var tampered = lines
        tampered.removeAll { $0.contains("\"seq\":12,") && $0.hasPrefix("{\"record\"") }
        #expect(tampered.count == lines.count - 1)
        let problem = try #require(
            AuditExportCheck.verify(lines: tampered, publicKey: key.publicKey).sections.first?.problem)
        #expect(problem.kind == .deleted && problem.seq == 12)
        #expect(problem.message.contains("relay-1"))

        // Cutting the end off leaves the rest unsigned.
        let cut = Array(lines.prefix { !$0.contains("\"chain\":\"relay-2\"") }.dropLast(2))
        let unsigned = try #require(
            AuditExportCheck.verify(lines: cut, publicKey: key.publicKey).sections.first?.problem)
        #expect(unsigned.kind == .unsigned && unsigned.seq == 11)
    }

    @Test func anUnreadableLineIsNamedByLineNumber() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let records = try await Self.fill(store, key: key)
        var (lines, _) = try await Self.export(store, since: records[0].time, key: key)
        lines[3] = lines[3].replacingOccurrences(of: "\"seq\":3,", with: "\"seq\":\"3\",")
        let result = AuditExportCheck.verify(lines: lines, publicKey: key.publicKey)
        #expect(!result.isIntact)
        #expect(result.unreadable?.line == 4)
        #expect(AuditExportCheck.report(result).last?.contains("line 4") == true)
    }

    @Test func aStoreThatDoesNotVerifyIsNeitherExportedNorSigned() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let records = try await Self.fill(store, key: key)
        // A record whose link does not fit, appended behind the writer's back.
        var forged = AuditChain(chain: "relay-1", head: AuditAnchor(chain: "relay-1", seq: 30, link: records[3].link))
        try await store.commit(
            StoreBatch(audit: [forged.append(AuditEntry(timeMillis: AuditTime.millis(AuditFixtures.now), event: .push))]
            ))
        await #expect(throws: AuditExport.Failure.self) {
            _ = try await Self.export(store, since: records[20].time, key: key)
        }
    }

    @Test func withoutASigningKeyTheEndIsUnsigned() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let records = try await Self.fill(store, key: key)
        let (lines, sections) = try await Self.export(store, since: records[0].time, key: nil)
        #expect(sections.first?.signedEnd == false)
        let problem = AuditExportCheck.verify(lines: lines, publicKey: key.publicKey).sections.first?.problem
        #expect(problem?.kind == .unsigned && problem?.seq == 11)
    }

    @Test func anEmptyRangeExportsNothing() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        _ = try await Self.fill(store, key: key)
        let (lines, sections) = try await Self.export(store, since: AuditFixtures.now, key: key)
        #expect(lines.isEmpty && sections.isEmpty)
        let result = AuditExportCheck.verify(lines: lines, publicKey: key.publicKey)
        #expect(!result.isIntact)
        #expect(AuditExportCheck.report(result) == ["NOT VERIFIED: the file holds no section (no header line)"])
    }

    @Test func anExportFileIsReadLineByLine() async throws {
        let store = MemoryStore()
        let key = AuditSigningKey.generate()
        let records = try await Self.fill(store, key: key)
        let (lines, _) = try await Self.export(store, since: records[0].time, key: key)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        // CRLF line ends, no final line break, read in small chunks.
        let path = try folder.write("export.jsonl", lines.joined(separator: "\r\n"))
        let read = Array(try FileLines(path: path, chunkSize: 7))
        #expect(read == lines)
        #expect(try AuditExportCheck.verify(fileAt: path, publicKey: key.publicKey).isIntact)
        #expect(throws: FileLinesError.self) {
            try AuditExportCheck.verify(fileAt: folder.file("none"), publicKey: key.publicKey)
        }
    }
}
