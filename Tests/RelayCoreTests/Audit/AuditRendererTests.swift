import Testing

@testable import RelayCore

@Suite struct AuditRendererTests {
    /// A push with a comma and quotes in its values, and an admin action with before/after state.
    let records: [AuditRecord] = {
        var writer = AuditChain(chain: "c1", head: nil)
        let push = writer.append(
            AuditEntry(
                timeMillis: 1_800_000_000_123, event: .push, tenantID: "acme", keyID: "k1", requestID: "r-1",
                client: "10.0.0.1", provider: "apns", tokenFingerprint: "3f9a0c11d2e4b5a6c7d8", critical: true,
                outcome: "ok", upstreamStatus: 200, attempts: 1, latencyMillis: 87,
                detail: #"title "Disk full", host db-1"#))
        let admin = writer.append(
            AuditEntry(
                timeMillis: 1_800_000_060_000, event: .admin, tenantID: "a-tenant-with-a-long-name",
                outcome: "tenant.update", actor: "operator:alice", before: .object(["rate": .int(10)]),
                after: .object(["rate": .int(20), "name": .string("Ops, \"EU\"")])))
        return [push, admin]
    }()

    @Test func csvHasTheFixedColumnsAndQuotesPerRFC4180() {
        let renderer = AuditRenderer(format: .csv)
        #expect(
            renderer.headerLine
                == "time,chain,seq,event,tenant,key,request,client,provider,token,critical,outcome,upstream_status,"
                + "upstream_reason,attempts,latency_ms,actor,detail,before,after")
        #expect(
            renderer.line(for: records[0])
                == #"2027-01-15T08:00:00.123Z,c1,1,push,acme,k1,r-1,10.0.0.1,apns,3f9a0c11d2e4b5a6c7d8,true,ok,200,,1,"#
                + #"87,,"title ""Disk full"", host db-1",,"#)
        #expect(
            renderer.line(for: records[1])
                == #"2027-01-15T08:01:00.000Z,c1,2,admin,a-tenant-with-a-long-name,,,,,,,tenant.update,,,,,"#
                + #"operator:alice,,"{""rate"":10}","{""name"":""Ops, \""EU\"""",""rate"":20}""#)
        #expect(AuditRenderer.csvField("a\nb") == "\"a\nb\"")
        #expect(AuditRenderer.csvField("plain text") == "plain text")
    }

    @Test func tableHasFixedWidthColumnsAndNoBeforeOrAfter() {
        let renderer = AuditRenderer(format: .table, tenantNames: ["acme": "Acme Corp"])
        let expected = [
            "TIME                      EVENT      TENANT                PROVIDER  TOKEN             CRITICAL  "
                + "OUTCOME                   STATUS    LATENCY  ACTOR",
            "2027-01-15T08:00:00.123Z  push       Acme Corp             apns      3f9a0c11d2e4b5a…  yes       "
                + "ok                           200      87 ms",
            "2027-01-15T08:01:00.000Z  admin      a-tenant-with-a-lon…                                        "
                + "tenant.update                                operator:alice",
        ]
        #expect([renderer.headerLine ?? ""] + records.map { renderer.line(for: $0) } == expected)
        #expect(!renderer.line(for: records[1]).contains("rate"))
        #expect(AuditRenderer.fit("a\u{1B}[2Jb", width: 6, alignRight: false) == "a\u{FFFD}[2Jb")
    }

    @Test func jsonLinesHaveSortedKeysAndAnISOTime() throws {
        let renderer = AuditRenderer(format: .jsonl)
        #expect(renderer.headerLine == nil)
        let line = renderer.line(for: records[1])
        #expect(
            line == #"{"actor":"operator:alice","after":{"name":"Ops, \"EU\"","rate":20},"before":{"rate":10},"#
                + #""chain":"c1","event":"admin","link":"\#(AuditHex.encode(records[1].link))","#
                + #""outcome":"tenant.update","seq":2,"tenantID":"a-tenant-with-a-long-name","#
                + #""time":"2027-01-15T08:01:00.000Z"}"#)
        #expect(try json(line).objectValue?["time"] == .string("2027-01-15T08:01:00.000Z"))
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (951_827_696_789, "2000-02-29T12:34:56.789Z"),
        (1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
        (4_102_444_800_000, "2100-01-01T00:00:00.000Z"),
    ])
    func isoTimesAreExact(millis: Int64, expected: String) {
        #expect(AuditTime.iso8601(millis: millis) == expected)
    }

    @Test func formatsAreNamedForTheCommandLine() {
        #expect(AuditFormat.allCases.map(\.rawValue) == ["jsonl", "csv", "table"])
    }
}
