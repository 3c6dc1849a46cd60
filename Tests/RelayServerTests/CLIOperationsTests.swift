import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The pieces of `pushrelay audit query`, `usage` and the progress display.
@Suite struct CLIOperationsTests {
    @Test(.timeLimit(.minutes(1))) func aQueryStreamsMatchingRecordsPageByPage() async throws {
        let store = MemoryStore()
        try await AuditFixtures.appendPushes(
            to: store, chain: "relay-1", times: AuditFixtures.times(count: 25, daysAgo: 1))
        try await AuditFixtures.appendPushes(
            to: store, chain: "relay-2", times: AuditFixtures.times(count: 5, daysAgo: 1), tenantID: "tenant-b"
        )
        var lines: [String] = []
        let count = try await AuditQuery(
            store: store, filter: AuditFilter(tenantID: "tenant-a", outcome: "ok"), format: .csv, pageSize: 3
        ).run { lines.append($0) }
        // Outcomes cycle DeviceNotRegistered, ok, ok: 16 of 25 are ok.
        #expect(count == 16)
        #expect(lines.count == 17)
        #expect(lines.first == AuditRenderer.csvColumns.joined(separator: ","))
        #expect(lines.dropFirst().allSatisfy { $0.contains(",relay-1,") && $0.contains(",ok,") })

        var limited: [String] = []
        let few = try await AuditQuery(store: store, filter: AuditFilter(), format: .jsonl, limit: 7, pageSize: 3)
            .run { limited.append($0) }
        #expect(few == 7 && limited.count == 7)
        #expect(limited.allSatisfy { $0.hasPrefix("{") })
    }

    @Test(arguments: [
        ("2027-01-15", 1_800_000_000 - 8 * 3600.0),
        ("2027-01-15T08:00:00Z", 1_800_000_000),
        ("2027-01-15T10:00:00.250+02:00", 1_800_000_000.25),
    ])
    func timesAreDaysOrISO8601WithAZone(text: String, seconds: Double) throws {
        let date = try #require(AuditTimeArgument.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.001)
    }

    @Test(arguments: ["yesterday", "2027-01-15T08:00:00", "15/01/2027", ""])
    func otherTimesAreRefused(text: String) {
        #expect(AuditTimeArgument.parse(text) == nil)
    }

    @Test func theProgressBarFillsWithTheWork() {
        #expect(ProgressBar.line(label: "chain a", done: 0, total: 10, width: 10) == "chain a [..........] 0% 0/10")
        #expect(ProgressBar.line(label: "chain a", done: 5, total: 10, width: 10) == "chain a [#####.....] 50% 5/10")
        #expect(ProgressBar.line(label: "chain a", done: 12, total: 10, width: 10) == "chain a [##########] 100% 12/12")
        #expect(ProgressBar.line(label: "c", done: 0, total: 0, width: 4) == "c [####] 100% 0/0")
    }

    @Test func theUsageReportHasOneLinePerDayAndProviderAndATotal() {
        let tenant = Tenant(id: "t-1", name: "acme")
        let report = UsageReport(
            tenant: tenant, fromDay: "2027-01-14",
            rows: [
                UsageRow(day: "2027-01-15", provider: .apns, counts: UsageCounts(delivered: 5, failed: 1, critical: 2)),
                UsageRow(day: "2027-01-14", provider: .fcm, counts: UsageCounts(tokenInvalid: 2, rateLimited: 3)),
                UsageRow(day: "2027-01-14", provider: .apns, counts: UsageCounts(rejected: 4)),
                UsageRow(day: "2027-01-15", provider: .expo, counts: UsageCounts(delivered: 1, accepted: 7)),
            ]
        )
        #expect(
            report.tableLines == [
                "DAY         PROVIDER  DELIVERED  TOKEN_INVALID  REJECTED  RATE_LIMITED  FAILED  ACCEPTED  TOTAL  CRITICAL",
                "2027-01-14  apns      0          0              4         0             0       0         4      0",
                "2027-01-14  fcm       0          2              0         3             0       0         5      0",
                "2027-01-15  apns      5          0              0         0             1       0         6      2",
                "2027-01-15  expo      1          0              0         0             0       7         8      0",
                "total                 6          2              4         3             1       7         23     2",
            ]
        )
        // As JSON it is the admin API's usage object, for the CLI's --json too: days ascending, then providers.
        let json = AdminJSON.usage(report).objectValue
        #expect(json?["tenant"] == .string("t-1"))
        #expect(json?["days"]?.elements.map { $0["day"] } == [.string("2027-01-14"), .string("2027-01-15")])
        #expect(json?["days"]?.elements.last?["providers"]?["expo"]?["accepted"] == .int(7))
        #expect(json?["days"]?.elements.last?["providers"]?["apns"]?["critical"] == .int(2))
        #expect(json?["days"]?.elements.first?["providers"]?["fcm"]?["rateLimited"] == .int(3))
        #expect(UsageReport.fromDay(days: 30, now: AuditFixtures.now) == "2026-12-17")
        #expect(UsageReport.fromDay(days: 1, now: AuditFixtures.now) == "2027-01-15")
    }

    @Test func verificationLinesNameTheChainAndTheSeq() {
        let intact = AuditVerification(
            chain: "relay-1", recordsVerified: 3, firstSeq: 4, lastSeq: 6, lastLink: [], checkpointsVerified: 1,
            problem: nil, lastSignedSeq: 5
        )
        #expect(
            AuditVerificationReport.line(for: intact)
                == "chain relay-1: intact, records 4…6 (3 records), 1 signed checkpoint verified, signed up to seq 5, "
                + "1 record unsigned after the last checkpoint"
        )
        #expect(AuditVerificationReport.warning(for: intact, keyKnown: true) == nil)
        var neverSigned = intact
        neverSigned.checkpointsVerified = 0
        neverSigned.lastSignedSeq = nil
        #expect(
            AuditVerificationReport.line(for: neverSigned).hasSuffix("3 records unsigned after the last checkpoint"))
        #expect(
            AuditVerificationReport.warning(for: neverSigned, keyKnown: true)?.contains("has no checkpoint") == true)
        var atExport = neverSigned
        atExport.exportCheckpointsVerified = 1
        atExport.lastSignedSeq = 6
        #expect(
            AuditVerificationReport.line(for: atExport).contains("1 signature made at export time (not by the relay)"))
        var broken = intact
        broken.problem = AuditProblem(
            kind: .modified, seq: 5, position: 2, message: "record seq 5 of chain relay-1 …"
        )
        #expect(AuditVerificationReport.line(for: broken).hasPrefix("chain relay-1: NOT INTACT at seq 5: record seq 5"))
    }
}
