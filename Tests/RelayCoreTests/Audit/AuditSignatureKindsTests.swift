import Foundation
import Testing

@testable import RelayCore

/// Signatures made by `audit export` when it writes a file are told apart from the relay's own checkpoints, and a
/// verification says how far a chain is signed and how much of it is not.
@Suite struct AuditSignatureKindsTests {
    let key: AuditSigningKey
    let time = Date(timeIntervalSince1970: 1_800_000_500)

    init() throws {
        key = try AuditFixtures.signingKey()
    }

    /// Header, records, relay checkpoints after the records in `signed`, and an export-time one at the end when
    /// `signedAtExport`.
    func section(_ records: [AuditRecord], signed: Set<Int64>, signedAtExport: Bool) -> [String] {
        let anchor = AuditAnchor.genesis(chain: records[0].chain)
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
        if signedAtExport, let last = records.last {
            let checkpoint = key.checkpoint(
                chain: last.chain, seq: last.seq, link: last.link, time: time, madeAtExport: true)
            lines.append(AuditExportLine.exportCheckpoint(checkpoint).encode())
        }
        return lines
    }

    func verify(_ lines: [String]) throws -> AuditVerification {
        var verifier = AuditExportVerifier(publicKey: key.publicKey)
        for line in lines { try verifier.feed(line: line) }
        return try #require(verifier.finish().first)
    }

    @Test func anExportTimeSignatureIsCountedApartFromTheRelaysCheckpoints() throws {
        let records = AuditFixtures.records(6, chain: "relay-1")
        let result = try verify(section(records, signed: [3], signedAtExport: true))
        #expect(result.isIntact)
        #expect(result.checkpointsVerified == 1, "the relay signed seq 3")
        #expect(result.exportCheckpointsVerified == 1, "the export signed seq 6")
        #expect(result.lastSignedSeq == 6)
        #expect(result.unsignedRecords == 0)
    }

    @Test func aChainTheRelayNeverSignedShowsNoRelayCheckpoint() throws {
        let records = AuditFixtures.records(4, chain: "relay-1")
        let result = try verify(section(records, signed: [], signedAtExport: true))
        #expect(result.isIntact, "the export's signature covers the end")
        #expect(result.checkpointsVerified == 0)
        #expect(result.exportCheckpointsVerified == 1)
    }

    /// The kind is part of the signed bytes: an export-time signature relabelled as a relay checkpoint no longer
    /// verifies, nor does a relay checkpoint relabelled the other way.
    @Test func relabellingASignatureBreaksIt() throws {
        let records = AuditFixtures.records(4, chain: "relay-1")
        let lines = section(records, signed: [], signedAtExport: true)
        let last = try #require(lines.last)
        #expect(last.hasPrefix(#"{"exportCheckpoint":"#))
        let relabelled =
            Array(lines.dropLast()) + [
                last.replacingOccurrences(of: #"{"exportCheckpoint":"#, with: #"{"checkpoint":"#)
            ]
        let result = try verify(relabelled)
        #expect(result.problem?.kind == .badCheckpoint)

        let relay = section(records, signed: [4], signedAtExport: false)
        let relayLast = try #require(relay.last)
        let promoted =
            Array(relay.dropLast()) + [
                relayLast.replacingOccurrences(of: #"{"checkpoint":"#, with: #"{"exportCheckpoint":"#)
            ]
        #expect(try verify(promoted).problem?.kind == .badCheckpoint)
    }

    @Test func theUnsignedTailIsCounted() {
        var verifier = AuditVerifier(chain: "relay-1", publicKey: key.publicKey)
        let records = AuditFixtures.records(10, chain: "relay-1")
        for record in records {
            _ = verifier.feed(record)
            if record.seq == 7 {
                _ = verifier.feed(key.checkpoint(chain: "relay-1", seq: 7, link: record.link, time: time))
            }
        }
        let result = verifier.finish(requireSignedEnd: false)
        #expect(result.isIntact)
        #expect(result.lastSignedSeq == 7)
        #expect(result.unsignedRecords == 3)

        var unsigned = AuditVerifier(chain: "relay-1", publicKey: key.publicKey)
        for record in records { _ = unsigned.feed(record) }
        let never = unsigned.finish(requireSignedEnd: false)
        #expect(never.lastSignedSeq == nil)
        #expect(never.unsignedRecords == 10)
    }
}
