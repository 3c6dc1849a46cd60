import Crypto
import Foundation
import Testing

@testable import RelayCore

@Suite struct AuditKeyTests {
    @Test func signingKeyRoundTripsThroughBase64AndToleratesWhitespace() throws {
        let key = try AuditFixtures.signingKey()
        #expect(key.base64 == AuditFixtures.signingKeyBase64)
        let spaced =
            "  "
            + AuditFixtures.signingKeyBase64.enumerated().map { "\($1)" + ($0 % 8 == 7 ? "\n" : "") }
            .joined() + "\n"
        let again = try AuditSigningKey(base64: spaced)
        #expect(again.publicKey == key.publicKey)
        let generated = AuditSigningKey.generate()
        #expect(try AuditSigningKey(base64: generated.base64).publicKey == generated.publicKey)
        #expect(generated.publicKey != key.publicKey)
    }

    @Test func publicKeyRoundTripsAndItsIDIsTheHashPrefix() throws {
        let publicKey = try AuditFixtures.signingKey().publicKey
        let raw = try #require(Data(base64Encoded: publicKey.base64))
        #expect(raw.count == 32)
        #expect(publicKey.keyID == String(AuditHex.encode(Array(SHA256.hash(data: raw))).prefix(16)))
        #expect(publicKey.keyID.count == 16)
        #expect(try AuditPublicKey(base64: publicKey.base64) == publicKey)
    }

    @Test func badKeysGiveReadableErrors() {
        let short = Data(repeating: 7, count: 31).base64EncodedString()
        #expect(throws: AuditKeyError.wrongLength(.signing, bytes: 31)) { try AuditSigningKey(base64: short) }
        #expect(
            AuditKeyError.wrongLength(.signing, bytes: 31).description
                == "audit signing key: expected base64 of 32 bytes, got 31 bytes")
        #expect(throws: AuditKeyError.notBase64(.public)) { try AuditPublicKey(base64: "not base64!") }
        #expect(AuditKeyError.notBase64(.public).description.hasPrefix("audit public key: expected base64 of 32 bytes"))
        #expect(throws: AuditKeyError.wrongLength(.public, bytes: 0)) { try AuditPublicKey(base64: "") }
    }
}

@Suite struct AuditCheckpointTests {
    let records = AuditFixtures.records(50)
    let time = Date(timeIntervalSince1970: 1_800_000_100)

    func checkpoint(after seq: Int, key: AuditSigningKey? = nil) throws -> AuditCheckpoint {
        try (key ?? AuditFixtures.signingKey()).checkpoint(
            chain: "chain-a", seq: Int64(seq), link: records[seq - 1].link, time: time)
    }

    /// Records with checkpoints placed right after the records they sign.
    func stream(checkpoints: [Int: AuditCheckpoint], records: [AuditRecord]? = nil) -> [AuditExportLine] {
        (records ?? self.records).flatMap { record -> [AuditExportLine] in
            [.record(record)] + (checkpoints[Int(record.seq)].map { [.checkpoint($0)] } ?? [])
        }
    }

    func verify(
        _ lines: [AuditExportLine], anchor: AuditAnchor = .genesis(chain: "chain-a"), requireSignedEnd: Bool = true
    ) throws -> AuditVerification {
        var verifier = AuditVerifier(anchor: anchor, publicKey: try AuditFixtures.signingKey().publicKey)
        for line in lines {
            switch line {
            case .record(let record): _ = verifier.feed(record)
            case .checkpoint(let checkpoint), .exportCheckpoint(let checkpoint): _ = verifier.feed(checkpoint)
            case .header: Issue.record("no headers here")
            }
        }
        return verifier.finish(requireSignedEnd: requireSignedEnd)
    }

    @Test func signatureVerifiesAndCoversEveryField() throws {
        let key = try AuditFixtures.signingKey()
        let signed = try checkpoint(after: 25)
        #expect(signed.keyID == key.publicKey.keyID)
        #expect(signed.timeMillis == 1_800_000_100_000)
        #expect(signed.signature.count == 64)
        #expect(key.publicKey.isValidSignature(signed))
        let message = String(decoding: signed.signedMessage, as: UTF8.self)
        #expect(message.hasPrefix(#"{"chain":"chain-a","keyID":""#))
        #expect(message.hasSuffix(#","seq":25,"time":1800000100000,"type":"pushrelay-audit-checkpoint-v1"}"#))

        let edits: [(inout AuditCheckpoint) -> Void] = [
            { $0.signature[10] ^= 0x40 }, { $0.seq += 1 }, { $0.link[0] ^= 1 }, { $0.timeMillis += 1 },
            { $0.chain = "chain-b" }, { $0.signature = [] },
        ]
        for edit in edits {
            var tampered = signed
            edit(&tampered)
            #expect(!key.publicKey.isValidSignature(tampered))
        }
        #expect(!AuditSigningKey.generate().publicKey.isValidSignature(signed), "another key rejects it")
    }

    @Test func chainWithSignedEndPasses() throws {
        let result = try verify(stream(checkpoints: [25: checkpoint(after: 25), 50: checkpoint(after: 50)]))
        #expect(result.isIntact)
        #expect(result.checkpointsVerified == 2)
        #expect(result.recordsVerified == 50)
    }

    @Test func missingFinalCheckpointIsUnsignedWhenRequired() throws {
        let lines = stream(checkpoints: [25: try checkpoint(after: 25)])
        let result = try verify(lines)
        #expect(result.problem?.kind == .unsigned)
        #expect(result.problem?.seq == 26)
        #expect(result.problem?.position == 27, "25 records and a checkpoint come before it")
        #expect(result.problem?.message == "records 26…50 of chain chain-a are not covered by a signed checkpoint")
        #expect(result.checkpointsVerified == 1)
        #expect(try verify(lines, requireSignedEnd: false).isIntact)
    }

    @Test func withoutAPublicKeyNothingIsSigned() throws {
        var verifier = AuditVerifier(chain: "chain-a")
        for record in records { _ = verifier.feed(record) }
        #expect(verifier.feed(try checkpoint(after: 50)) == nil, "its link still agrees")
        let result = verifier.finish(requireSignedEnd: true)
        #expect(result.checkpointsVerified == 0)
        #expect(result.problem?.kind == .unsigned)
        #expect(result.problem?.seq == 1)
    }

    @Test func tamperedSignatureIsABadCheckpoint() throws {
        var bad = try checkpoint(after: 25)
        bad.signature[0] ^= 1
        let result = try verify(stream(checkpoints: [25: bad, 50: checkpoint(after: 50)]))
        #expect(result.problem?.kind == .badCheckpoint)
        #expect(result.problem?.seq == 25)
        #expect(result.problem?.position == 26)
        #expect(result.problem?.message == "checkpoint for seq 25 of chain chain-a: the signature does not verify")
    }

    @Test func checkpointOfAnotherKeyIsABadCheckpoint() throws {
        let other = AuditSigningKey.generate()
        let result = try verify(stream(checkpoints: [50: checkpoint(after: 50, key: other)]))
        #expect(result.problem?.kind == .badCheckpoint)
        #expect(result.problem?.seq == 50)
        #expect(result.problem?.message.contains("unknown key \(other.publicKey.keyID)") == true)
    }

    @Test func checkpointWithAnotherLinkIsABadCheckpoint() throws {
        let key = try AuditFixtures.signingKey()
        let wrong = key.checkpoint(chain: "chain-a", seq: 25, link: records[23].link, time: time)
        let result = try verify(stream(checkpoints: [25: wrong]))
        #expect(result.problem?.kind == .badCheckpoint)
        #expect(result.problem?.seq == 25)
        #expect(result.recordsVerified == 25)
    }

    @Test func rewrittenTailIsCaughtByTheNextCheckpoint() throws {
        // Whoever edits the store edits seq 10 and recomputes every later link: the chain is consistent again.
        var rewritten = records
        rewritten[9].outcome = "ok-but-not-really"
        var writer = AuditChain(chain: "chain-a", head: AuditAnchor(chain: "chain-a", seq: 9, link: records[8].link))
        for index in 9..<50 { rewritten[index] = writer.append(rewritten[index].entry) }
        #expect(try verify(stream(checkpoints: [:], records: rewritten), requireSignedEnd: false).isIntact)

        let result = try verify(
            stream(checkpoints: [5: checkpoint(after: 5), 30: checkpoint(after: 30)], records: rewritten))
        #expect(result.problem?.kind == .badCheckpoint)
        #expect(result.problem?.seq == 30)
        #expect(result.checkpointsVerified == 1)
    }

    @Test func checkpointBeyondTheLastRecordRevealsDeletedTail() throws {
        var lines = stream(checkpoints: [:], records: Array(records[..<48]))
        lines.append(.checkpoint(try checkpoint(after: 50)))
        let result = try verify(lines)
        #expect(result.problem?.kind == .deleted)
        #expect(result.problem?.seq == 49)
        #expect(result.problem?.message.hasPrefix("records 49…50 of chain chain-a are missing") == true)
    }

    @Test func checkpointOutOfPlaceIsABadCheckpoint() throws {
        var lines = stream(checkpoints: [:])
        lines.insert(.checkpoint(try checkpoint(after: 10)), at: 12)  // after seq 12
        let result = try verify(lines)
        #expect(result.problem?.kind == .badCheckpoint)
        #expect(result.problem?.seq == 10)
    }

    @Test func checkpointsAtTheAnchorAreAcceptedAndOlderOnesSkipped() throws {
        let anchor = AuditAnchor(chain: "chain-a", seq: 20, link: records[19].link)
        let lines: [AuditExportLine] =
            [.checkpoint(try checkpoint(after: 3)), .checkpoint(try checkpoint(after: 20))]
            + stream(checkpoints: [50: try checkpoint(after: 50)], records: Array(records[20...]))
        let result = try verify(lines, anchor: anchor)
        #expect(result.isIntact)
        #expect(result.checkpointsVerified == 2, "seq 20 (the anchor) and seq 50; seq 3 is before the stretch")
        #expect(result.firstSeq == 21)
    }

    @Test func checkpointJSONRoundTrips() throws {
        let signed = try checkpoint(after: 7)
        let data = try JSONEncoder().encode(signed)
        #expect(try JSONDecoder().decode(AuditCheckpoint.self, from: data) == signed)
        let anchor = AuditAnchor(chain: "chain-a", seq: 7, link: records[6].link)
        #expect(try JSONDecoder().decode(AuditAnchor.self, from: JSONEncoder().encode(anchor)) == anchor)
        let record = records[9]
        #expect(try JSONDecoder().decode(AuditRecord.self, from: JSONEncoder().encode(record)) == record)
    }
}
