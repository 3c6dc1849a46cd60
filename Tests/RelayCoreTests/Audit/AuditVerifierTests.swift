import Testing

@testable import RelayCore

@Suite struct AuditVerifierTests {
    let records = AuditFixtures.records(50)

    @Test func intactChainPasses() {
        let (result, reported) = AuditFixtures.verify(records)
        #expect(reported.isEmpty)
        #expect(result.isIntact)
        #expect(result.chain == "chain-a")
        #expect(result.recordsVerified == 50)
        #expect(result.firstSeq == 1)
        #expect(result.lastSeq == 50)
        #expect(result.lastLink == records[49].link)
        #expect(result.head == AuditAnchor(chain: "chain-a", seq: 50, link: records[49].link))
    }

    @Test func emptyStretchIsIntact() {
        let (result, _) = AuditFixtures.verify([], requireSignedEnd: true)
        #expect(result.isIntact)
        #expect(result.recordsVerified == 0)
        #expect(result.firstSeq == nil)
        #expect(result.lastSeq == 0)
        #expect(result.lastLink == AuditChain.genesisLink)
    }

    @Test func modifiedFieldNamesThatRecord() {
        var tampered = records
        tampered[19].outcome = "DeviceNotRegistered"
        let (result, reported) = AuditFixtures.verify(tampered)
        let problem = result.problem
        #expect(problem?.kind == .modified)
        #expect(problem?.seq == 20)
        #expect(problem?.position == 20)
        #expect(problem?.message.hasPrefix("record seq 20 of chain chain-a does not match its link (modified)") == true)
        #expect(reported == [result.problem].compactMap { $0 }, "reported once, by the feed that found it")
        #expect(result.recordsVerified == 19)
        #expect(result.lastSeq == 19)
    }

    @Test func modifiedLinkAloneNamesThatRecord() {
        var tampered = records
        tampered[9].link[0] ^= 1
        let (result, _) = AuditFixtures.verify(tampered)
        #expect(result.problem?.kind == .modified)
        #expect(result.problem?.seq == 10)
    }

    @Test func modifiedRecordWithRecomputedLinkNamesTheNextRecord() {
        var tampered = records
        tampered[19].tenantID = "someone-else"
        tampered[19].link = AuditChain.link(after: tampered[18].link, canonicalBytes: tampered[19].canonicalBytes())
        let (result, _) = AuditFixtures.verify(tampered)
        #expect(result.problem?.kind == .modified)
        #expect(result.problem?.seq == 21)
        #expect(result.problem?.message.contains("seq 20 was modified and its link recomputed") == true)
    }

    @Test func firstRecordModifiedNamesOnlyItself() {
        var tampered = records
        tampered[0].client = "192.0.2.1"
        let (result, _) = AuditFixtures.verify(tampered)
        #expect(result.problem?.seq == 1)
        #expect(result.problem?.message.contains("seq 0") == false)
    }

    @Test func recordDeletedFromTheMiddleIsNamed() {
        var tampered = records
        tampered.remove(at: 24)  // seq 25
        let (result, reported) = AuditFixtures.verify(tampered)
        #expect(result.problem?.kind == .deleted)
        #expect(result.problem?.seq == 25)
        #expect(result.problem?.position == 25, "the position of seq 26, the record after the gap")
        #expect(result.problem?.message == "record 25 of chain chain-a is missing (seq 26 follows seq 24)")
        #expect(reported.count == 1)
        #expect(result.recordsVerified == 24)
    }

    @Test func severalDeletedRecordsAreNamedAsARange() {
        var tampered = records
        tampered.removeSubrange(9..<12)  // seqs 10, 11, 12
        let (result, _) = AuditFixtures.verify(tampered)
        #expect(result.problem?.kind == .deleted)
        #expect(result.problem?.seq == 10)
        #expect(result.problem?.message == "records 10…12 of chain chain-a are missing (seq 13 follows seq 9)")
    }

    @Test func lastButOneDeletedIsFoundAtTheEnd() {
        var tampered = records
        tampered.remove(at: 48)  // seq 49
        var verifier = AuditVerifier(chain: "chain-a")
        let reported = tampered.compactMap { verifier.feed($0) }
        #expect(reported.isEmpty, "the gap is decided by the next record, and there is none")
        let result = verifier.finish(requireSignedEnd: false)
        #expect(result.problem?.kind == .deleted)
        #expect(result.problem?.seq == 49)
        #expect(result.problem?.position == 49)
    }

    @Test func swappedRecordsAreReorderedNotDeleted() {
        var tampered = records
        tampered.swapAt(29, 30)  // seq 31 now comes before seq 30
        let (result, reported) = AuditFixtures.verify(tampered)
        #expect(result.problem?.kind == .reordered)
        #expect(result.problem?.seq == 30)
        #expect(result.problem?.position == 31)
        #expect(result.problem?.message == "record seq 30 appears after seq 31 in chain chain-a")
        #expect(reported.count == 1)
    }

    @Test func recordMovedSeveralPlacesLaterIsReportedAsTheGapItLeaves() {
        var tampered = records
        let moved = tampered.remove(at: 4)  // seq 5, moved after seq 8
        tampered.insert(moved, at: 7)
        let (result, _) = AuditFixtures.verify(tampered)
        #expect(result.problem?.kind == .deleted, "seq 7 follows the gap left by seq 5, so it is not a swap")
        #expect(result.problem?.seq == 5)
    }

    @Test func recordMovedEarlierIsReordered() {
        var tampered = records
        let moved = tampered.remove(at: 14)  // seq 15, moved before seq 10
        tampered.insert(moved, at: 9)
        let (result, _) = AuditFixtures.verify(tampered)
        #expect(result.problem?.kind == .reordered)
        #expect(result.problem?.seq == 10)
        #expect(result.problem?.message == "record seq 10 appears after seq 15 in chain chain-a")
    }

    @Test func repeatedRecordIsReordered() {
        var duplicated = records
        duplicated.insert(records[9], at: 10)
        let (again, _) = AuditFixtures.verify(duplicated)
        #expect(again.problem?.kind == .reordered)
        #expect(again.problem?.seq == 10)
        #expect(again.problem?.message == "record seq 10 of chain chain-a appears twice")
    }

    @Test func foreignRecordIsNamed() {
        var mixed = records
        mixed.insert(AuditFixtures.records(5, chain: "chain-b")[4], at: 10)
        let (result, _) = AuditFixtures.verify(mixed)
        #expect(result.problem?.kind == .foreignRecord)
        #expect(result.problem?.seq == 5)
        #expect(result.problem?.position == 11)
        #expect(result.problem?.message == "record seq 5 of chain chain-b appears in chain chain-a")
    }

    @Test func firstProblemWinsAndLaterFeedsAreIgnored() {
        var tampered = records
        tampered[4].detail = "edited"
        tampered.remove(at: 30)
        var verifier = AuditVerifier(chain: "chain-a")
        let reported = tampered.map { verifier.feed($0) }
        #expect(reported.compactMap { $0 }.map(\.seq) == [5])
        #expect(reported[4]?.kind == .modified)
        let result = verifier.finish(requireSignedEnd: true)
        #expect(result.problem?.seq == 5)
        #expect(result.recordsVerified == 4)
    }

    @Test func verificationCanStartFromAnAnchorMidChain() {
        let anchor = AuditAnchor(chain: "chain-a", seq: 20, link: records[19].link)
        let (result, _) = AuditFixtures.verify(Array(records[20...]), anchor: anchor)
        #expect(result.isIntact)
        #expect(result.firstSeq == 21)
        #expect(result.lastSeq == 50)
        #expect(result.recordsVerified == 30)

        let (skipped, _) = AuditFixtures.verify(Array(records[21...]), anchor: anchor)
        #expect(skipped.problem?.kind == .deleted)
        #expect(skipped.problem?.seq == 21)

        let wrongAnchor = AuditAnchor(chain: "chain-a", seq: 20, link: records[18].link)
        let (broken, _) = AuditFixtures.verify(Array(records[20...]), anchor: wrongAnchor)
        #expect(broken.problem?.kind == .modified)
        #expect(broken.problem?.seq == 21)

        let (early, _) = AuditFixtures.verify(Array(records[18...]), anchor: anchor)
        #expect(early.problem?.kind == .reordered)
        #expect(early.problem?.seq == 19)
    }
}
