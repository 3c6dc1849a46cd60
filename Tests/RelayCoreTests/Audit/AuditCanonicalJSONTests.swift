import Testing

@testable import RelayCore

@Suite struct AuditCanonicalJSONTests {
    @Test func smallRecordHasGoldenCanonicalBytes() {
        let entry = AuditEntry(
            timeMillis: 1_800_000_000_123, event: .push, tenantID: "acme", provider: "apns", critical: true,
            outcome: "ok", upstreamStatus: 200, detail: "a\nq\"b\\s\u{01}\té/")
        var writer = AuditChain(chain: "c1", head: nil)
        let record = writer.append(entry)
        let expected =
            #"{"chain":"c1","critical":true,"detail":"a\nq\"b\\s\u0001\té/","event":"push","outcome":"ok","#
            + #""provider":"apns","seq":1,"tenantID":"acme","time":1800000000123,"upstreamStatus":200}"#
        #expect(String(decoding: record.canonicalBytes(), as: UTF8.self) == expected)
    }

    /// `canonicalBytes()` writes the record's fields directly, in a fixed order; it must give exactly the canonical
    /// form of the record's JSON object, whichever fields are present.
    @Test func theDirectWriterGivesTheCanonicalFormOfTheRecordsObject() {
        let full = AuditEntry(
            timeMillis: 1_800_000_000_123, event: .push, tenantID: "acme\u{7F}", keyID: "k1", requestID: "r-1",
            client: "203.0.113.9", provider: "apns", tokenFingerprint: "ab12", critical: false, outcome: "delivered",
            upstreamStatus: 410, upstreamReason: "Unregistered", attempts: 3, latencyMillis: 12, actor: "ops\"x",
            before: .object(["b": .int(1), "a": .array([.string("\n"), .null]), "é": .bool(true)]),
            after: .object(["Z": .double(0.5), "z": .string("ü")]), detail: "tab\there", app: "beta")
        let partial = AuditEntry(timeMillis: 0, event: .retention, detail: "")
        for (seq, entry) in [(1, full), (9_000_000_000, partial)] {
            let record = AuditRecord(chain: "c\\1", seq: Int64(seq), entry: entry, link: AuditChain.genesisLink)
            let viaObject = CanonicalJSON.encode(.object(record.contentJSON))
            #expect(record.canonicalBytes() == viaObject, "\(String(decoding: viaObject, as: UTF8.self))")
        }
        // Every field of the format is in the full record, so the writer's order is checked for all of them.
        let fullRecord = AuditRecord(chain: "c", seq: 1, entry: full, link: AuditChain.genesisLink)
        #expect(Set(fullRecord.contentJSON.keys) == AuditRecord.contentFields)
    }

    @Test func canonicalBytesAreDeterministicAndExcludeTheLink() {
        let records = AuditFixtures.records(3)
        var copy = records[1]
        #expect(copy.canonicalBytes() == records[1].canonicalBytes())
        copy.link = AuditChain.genesisLink
        #expect(copy.canonicalBytes() == records[1].canonicalBytes(), "the link is not part of the hashed bytes")
        #expect(!String(decoding: copy.canonicalBytes(), as: UTF8.self).contains("link"))
    }

    @Test func absentFieldsAreOmittedNotNull() {
        let record = AuditRecord(
            chain: "c", seq: 7, entry: AuditEntry(timeMillis: 5, event: .retention), link: AuditChain.genesisLink)
        #expect(
            String(decoding: record.canonicalBytes(), as: UTF8.self)
                == #"{"chain":"c","event":"retention","seq":7,"time":5}"#)
    }

    @Test func keysAreSortedBytewiseAtEveryLevel() {
        // U+0065 U+0301 ("é" decomposed) starts with the byte 0x65 and so sorts before "f" bytewise, while Swift's
        // String ordering (on the composed form) would put it after.
        let value = JSONValue.object([
            "f": .int(1), "e\u{301}": .int(2), "B": .object(["z": .null, "a": .array([.bool(false)])]), "a": .int(3),
        ])
        #expect(CanonicalJSON.string(value) == "{\"B\":{\"a\":[false],\"z\":null},\"a\":3,\"e\u{301}\":2,\"f\":1}")
    }

    @Test(arguments: [
        (JSONValue.string("\u{08}\u{0C}\n\r\t\u{1F}\u{7F}\u{2028}"), "\"\\b\\f\\n\\r\\t\\u001f\u{7F}\u{2028}\""),
        (.string("\"\\/"), #""\"\\/""#),
        (.string("日本 🚀"), "\"日本 🚀\""),
        (.int(-42), "-42"),
        (.int(.max), "9223372036854775807"),
        (.double(1.5), "1.5"),
        (.double(2.0), "2"),
        (.double(-0.0), "0"),
        (.double(0.1), "0.1"),
        (.double(1e300), "1e+300"),
        (.double(.infinity), "null"),
        (.double(.nan), "null"),
        (.array([]), "[]"),
        (.object([:]), "{}"),
    ])
    func valuesAreWrittenDeterministically(value: JSONValue, expected: String) {
        #expect(CanonicalJSON.string(value) == expected)
    }

    @Test func canonicalFormSurvivesAJSONRoundTrip() throws {
        let value = JSONValue.object([
            "fraction": .double(0.30000000000000004), "integral": .double(3.0), "big": .double(1.2345678901234568e+20),
            "tiny": .double(.leastNonzeroMagnitude), "text": .string("\u{0}x\u{1B}"), "list": .array([.int(1), .null]),
        ])
        let text = CanonicalJSON.encode(value)
        let reparsed = try #require(JSONValue.decode(text))
        #expect(CanonicalJSON.encode(reparsed) == text)
    }
}
