import Crypto
import Foundation
import Testing

@testable import RelayCore

@Suite struct AuditChainTests {
    @Test func appendNumbersFromOneAndLinksEachRecordToThePrevious() {
        let records = AuditFixtures.records(3)
        #expect(records.map(\.seq) == [1, 2, 3])
        #expect(records.allSatisfy { $0.chain == "chain-a" && $0.link.count == 32 })
        var previous = AuditChain.genesisLink
        for record in records {
            let expected = Array(SHA256.hash(data: previous + record.canonicalBytes()))
            #expect(record.link == expected)
            previous = record.link
        }
    }

    @Test func resumingFromTheHeadContinuesTheSameChain() {
        let whole = AuditFixtures.records(10)
        var first = AuditChain(chain: "chain-a", head: nil)
        let firstHalf = (1...4).map { first.append(AuditFixtures.entry($0)) }
        #expect(first.head == AuditAnchor(chain: "chain-a", seq: 4, link: whole[3].link))
        var resumed = AuditChain(chain: "chain-a", head: first.head)
        let secondHalf = (5...10).map { resumed.append(AuditFixtures.entry($0)) }
        #expect(firstHalf + secondHalf == whole)
    }

    @Test func timeIsKeptToTheMillisecond() {
        let entry = AuditEntry(
            timeMillis: AuditTime.millis(Date(timeIntervalSince1970: 1_800_000_000.1234)), event: .push)
        #expect(entry.timeMillis == 1_800_000_000_123)
        for millis: Int64 in [0, 1, 999, 1_800_000_000_123, 1_700_000_000_001, -1] {
            #expect(AuditTime.millis(AuditTime.date(millis: millis)) == millis, "millis \(millis) round-trips")
        }
    }

    @Test func everyFieldChangesTheLink() {
        let base = AuditEntry(
            timeMillis: 1, event: .push, tenantID: "t", keyID: "k", requestID: "r", client: "c", provider: "p",
            tokenFingerprint: "f", critical: false, outcome: "ok", upstreamStatus: 200, upstreamReason: "x",
            attempts: 1, latencyMillis: 5, actor: "a", before: .null, after: .int(1), detail: "d")
        let edits: [(String, (inout AuditEntry) -> Void)] = [
            ("time", { $0.timeMillis += 1 }), ("event", { $0.event = .refused }), ("tenantID", { $0.tenantID = "u" }),
            ("keyID", { $0.keyID = nil }), ("requestID", { $0.requestID = "s" }), ("client", { $0.client = "d" }),
            ("provider", { $0.provider = "q" }), ("tokenFingerprint", { $0.tokenFingerprint = "g" }),
            ("critical", { $0.critical = true }), ("outcome", { $0.outcome = "DeviceNotRegistered" }),
            ("upstreamStatus", { $0.upstreamStatus = 410 }), ("upstreamReason", { $0.upstreamReason = "y" }),
            ("attempts", { $0.attempts = 2 }), ("latencyMillis", { $0.latencyMillis = 6 }),
            ("actor", { $0.actor = "cli" }), ("before", { $0.before = nil }), ("after", { $0.after = .int(2) }),
            ("detail", { $0.detail = "e" }),
        ]
        func link(_ entry: AuditEntry, chain: String = "c") -> [UInt8] {
            var writer = AuditChain(chain: chain, head: nil)
            return writer.append(entry).link
        }
        let baseLink = link(base)
        var seen: Set<[UInt8]> = [baseLink]
        for (name, edit) in edits {
            var changed = base
            edit(&changed)
            let changedLink = link(changed)
            #expect(changedLink != baseLink, "changing \(name) changes the link")
            seen.insert(changedLink)
        }
        #expect(seen.count == edits.count + 1)
        #expect(link(base, chain: "other") != baseLink, "the chain id is hashed")
        var later = AuditChain(chain: "c", head: AuditAnchor(chain: "c", seq: 1, link: AuditChain.genesisLink))
        #expect(later.append(base).link != baseLink, "the seq is hashed")
    }
}
