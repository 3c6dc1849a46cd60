import Foundation
import Testing

@testable import RelayCore

@Suite struct AuditExportTests {
    let key: AuditSigningKey
    let time = Date(timeIntervalSince1970: 1_800_000_500)

    init() throws {
        key = try AuditFixtures.signingKey()
    }

    /// An export section: header, records and a checkpoint after each record whose seq is in `signed`.
    func section(_ records: [AuditRecord], anchor: AuditAnchor, signed: Set<Int64>) -> [String] {
        let header = AuditExportHeader(
            chain: anchor.chain, anchor: anchor, exportedAtMillis: AuditTime.millis(time),
            publicKeyID: key.publicKey.keyID)
        var lines = [AuditExportLine.header(header).encode()]
        for record in records {
            lines.append(AuditExportLine.record(record).encode())
            if signed.contains(record.seq) {
                let checkpoint = key.checkpoint(chain: record.chain, seq: record.seq, link: record.link, time: time)
                lines.append(AuditExportLine.checkpoint(checkpoint).encode())
            }
        }
        return lines
    }

    func verify(_ lines: [String]) throws -> [AuditVerification] {
        var verifier = AuditExportVerifier(publicKey: key.publicKey)
        for line in lines { try verifier.feed(line: line) }
        return verifier.finish()
    }

    @Test func linesRoundTripThroughEncodeAndDecode() throws {
        var writer = AuditChain(chain: "chain-a", head: nil)
        let admin = writer.append(
            AuditEntry(
                timeMillis: AuditFixtures.t0, event: .admin, tenantID: "acme", outcome: "tenant.update",
                actor: "operator:alice", before: .object(["rate": .double(2.0), "name": .string("A \"b\"\n")]),
                after: .null, detail: "rate 2 → 2.5"))
        let lines: [AuditExportLine] = [
            .header(
                AuditExportHeader(
                    chain: "chain-a", anchor: .genesis(chain: "chain-a"), exportedAtMillis: 42, publicKeyID: "abc")),
            .record(admin),
            .record(AuditFixtures.records(3)[2]),
            .checkpoint(key.checkpoint(chain: "chain-a", seq: 1, link: admin.link, time: time)),
        ]
        for (index, line) in lines.enumerated() {
            let text = line.encode()
            #expect(!text.contains("\n"))
            let decoded = try AuditExportLine.decode(line: text, lineNumber: index + 1)
            #expect(decoded == line)
            #expect(decoded.encode() == text, "re-encoding gives the same bytes")
            if case .record(let record) = decoded, case .record(let original) = line {
                #expect(record.canonicalBytes() == original.canonicalBytes(), "the link still verifies")
            }
        }
        guard case .record(let decodedAdmin) = try AuditExportLine.decode(line: lines[1].encode(), lineNumber: 2) else {
            Issue.record("not a record")
            return
        }
        #expect(decodedAdmin.after == .some(.null), "a JSON null stays a value, distinct from an absent field")
        #expect(decodedAdmin.critical == nil)
    }

    @Test func recordLineIsTheCanonicalBytesPlusTheLink() throws {
        let record = AuditFixtures.records(1)[0]
        let line = AuditExportLine.record(record).encode()
        let canonical = String(decoding: record.canonicalBytes(), as: UTF8.self)
        #expect(line.hasPrefix(#"{"record":{"#))
        #expect(line.contains(#","link":"\#(AuditHex.encode(record.link))","#))
        var withoutLink = line
        withoutLink = withoutLink.replacingOccurrences(of: #","link":"\#(AuditHex.encode(record.link))""#, with: "")
        #expect(withoutLink == #"{"record":"# + canonical + "}")
    }

    @Test func exportVerifierChecksEachChainFromItsAnchor() throws {
        let chainA = AuditFixtures.records(10, chain: "chain-a")
        let chainB = AuditFixtures.records(30, chain: "chain-b")
        let anchorB = AuditAnchor(chain: "chain-b", seq: 20, link: chainB[19].link)
        let lines =
            section(chainA, anchor: .genesis(chain: "chain-a"), signed: [5, 10])
            + [""]
            + section(Array(chainB[20...]), anchor: anchorB, signed: [30])
        let results = try verify(lines)
        #expect(results.map(\.chain) == ["chain-a", "chain-b"])
        #expect(results.map(\.isIntact) == [true, true])
        #expect(results.map(\.recordsVerified) == [10, 10])
        #expect(results.map(\.checkpointsVerified) == [2, 1])
        #expect(results[1].firstSeq == 21)
        #expect(results[1].lastLink == chainB[29].link)
    }

    @Test func exportVerifierReportsEachChainsProblem() throws {
        let chainA = AuditFixtures.records(10, chain: "chain-a")
        var chainB = AuditFixtures.records(10, chain: "chain-b")
        chainB[3].tokenFingerprint = "someone-else"
        let results = try verify(
            section(chainA, anchor: .genesis(chain: "chain-a"), signed: [10])
                + section(chainB, anchor: .genesis(chain: "chain-b"), signed: [10])
                + section(chainA, anchor: .genesis(chain: "chain-a"), signed: [5]))
        #expect(results.count == 3)
        #expect(results[0].isIntact)
        #expect(results[1].problem?.kind == .modified)
        #expect(results[1].problem?.seq == 4)
        #expect(results[2].problem?.kind == .unsigned, "an export must end at a checkpoint")
        #expect(results[2].problem?.seq == 6)
    }

    @Test func exportCutShortIsNotIntact() throws {
        let chainA = AuditFixtures.records(10, chain: "chain-a")
        let lines = section(chainA, anchor: .genesis(chain: "chain-a"), signed: [8, 10])
        // Drop the last record and its checkpoint: the stretch now ends after the seq-8 checkpoint, at seq 9.
        let results = try verify(Array(lines.dropLast(2)))
        #expect(results.first?.problem?.kind == .unsigned)
        #expect(results.first?.problem?.seq == 9)
    }

    @Test func recordBeforeAnyHeaderIsAnError() throws {
        let line = AuditExportLine.record(AuditFixtures.records(1)[0]).encode()
        var verifier = AuditExportVerifier(publicKey: key.publicKey)
        #expect(throws: AuditExportError(line: 2, field: nil, reason: "a record before any header")) {
            try verifier.feed(line: "  ")
            try verifier.feed(line: line)
        }
    }

    @Test(
        arguments: [
            ("{not json", nil, "not valid JSON"),
            (
                #"["record"]"#, nil,
                "expected an object with exactly one key: header, record, checkpoint or exportCheckpoint"
            ),
            (
                #"{"record":{},"checkpoint":{}}"#, nil,
                "expected an object with exactly one key: header, record, checkpoint or exportCheckpoint"
            ),
            (#"{"footer":{}}"#, nil, #"unknown line kind "footer" (header, record, checkpoint or exportCheckpoint)"#),
            (#"{"record":[]}"#, "record", "expected an object, got an array"),
            (
                #"{"record":{"chain":"c","seq":"1","time":0,"event":"push","link":""}}"#, "record.seq",
                "expected an integer, got a string"
            ),
            (#"{"record":{"chain":"c","seq":1,"time":0,"event":"push"}}"#, "record.link", "missing"),
            (
                #"{"record":{"chain":"c","seq":1,"time":0,"event":"pull","link":""}}"#, "record.event",
                #"unknown event "pull" (push, refused, admin, retention, dryRun)"#
            ),
            (
                #"{"record":{"chain":"c","seq":1,"time":0,"event":"push","link":"abcd"}}"#, "record.link",
                "expected 64 hex digits (32 bytes), got 4"
            ),
            (
                #"{"record":{"chain":"c","seq":1,"time":0,"event":"push","link":"zz","colour":1}}"#, "record.colour",
                "unknown field"
            ),
            (
                #"{"checkpoint":{"chain":"c","seq":1,"time":0,"keyID":"k","link":"00","signature":"xyz"}}"#,
                "checkpoint.link", "expected 64 hex digits (32 bytes), got 2"
            ),
            (
                #"{"header":{"format":"pushrelay-audit-export","version":2}}"#, "header.version",
                "unsupported version 2 (this build reads version 1)"
            ),
            (#"{"header":{"format":"csv"}}"#, "header.format", #"expected "pushrelay-audit-export""#),
        ] as [(String, String?, String)])
    func decodeErrorsNameTheLineAndField(line: String, field: String?, reason: String) {
        #expect(throws: AuditExportError(line: 7, field: field, reason: reason)) {
            try AuditExportLine.decode(line: line, lineNumber: 7)
        }
    }

    @Test func decodeErrorDescriptionIsReadable() {
        let error = AuditExportError(line: 12, field: "record.seq", reason: "expected an integer, got a string")
        #expect(error.description == "audit export line 12: record.seq: expected an integer, got a string")
    }

    @Test func headerAnchorMustBeTheHeadersChain() {
        let header = AuditExportHeader(
            chain: "chain-a", anchor: .genesis(chain: "chain-b"), exportedAtMillis: 0, publicKeyID: nil)
        #expect(
            throws: AuditExportError(
                line: 1, field: "header.anchor.chain", reason: #"expected "chain-a", the header's chain"#)
        ) {
            try AuditExportLine.decode(line: AuditExportLine.header(header).encode(), lineNumber: 1)
        }
    }
}
