import Foundation
import Testing

@testable import RelayCore

@Suite struct AuditFilterTests {
    let records = AuditFixtures.records(30)

    func seqs(_ filter: AuditFilter) -> [Int64] {
        records.filter(filter.matches).map(\.seq)
    }

    @Test func emptyFilterMatchesEverything() {
        #expect(seqs(AuditFilter()).count == 30)
    }

    @Test func timeRangeIsHalfOpen() {
        // Record n is at t0 + n seconds.
        let since = AuditTime.date(millis: AuditFixtures.t0 + 5_000)
        let until = AuditTime.date(millis: AuditFixtures.t0 + 8_000)
        #expect(seqs(AuditFilter(since: since, until: until)) == [5, 6, 7])
        #expect(seqs(AuditFilter(since: since)).first == 5)
        #expect(seqs(AuditFilter(until: until)).last == 7)
        #expect(seqs(AuditFilter(since: until, until: since)).isEmpty)
        let justAfter = AuditTime.date(millis: AuditFixtures.t0 + 5_001)
        #expect(seqs(AuditFilter(since: justAfter, until: until)) == [6, 7])
        #expect(AuditFilter(since: since, until: until).sinceMillis == AuditFixtures.t0 + 5_000)
        #expect(AuditFilter(since: since, until: until).untilMillis == AuditFixtures.t0 + 8_000)
    }

    @Test func fieldsMatchExactly() {
        #expect(seqs(AuditFilter(tenantID: "tenant-1")) == [1, 4, 7, 10, 13, 16, 19, 22, 25, 28])
        #expect(seqs(AuditFilter(event: .admin)) == [10, 20, 30])
        #expect(seqs(AuditFilter(outcome: "tenant.update")) == [10, 20, 30])
        #expect(seqs(AuditFilter(tenantID: "tenant-1", event: .admin)) == [10])
        #expect(seqs(AuditFilter(tenantID: "nobody")).isEmpty)
    }

    @Test func criticalMatchesOnlyRecordsThatHaveIt() {
        #expect(seqs(AuditFilter(critical: true)) == [3, 6, 9, 12, 15, 18, 21, 24, 27])
        let notCritical = seqs(AuditFilter(critical: false))
        #expect(notCritical.count == 18, "30 records, minus 9 critical, minus 3 admin actions without criticality")
        #expect(!notCritical.contains(10))
    }
}
