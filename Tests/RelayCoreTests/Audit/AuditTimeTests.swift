import Foundation
import Testing

@testable import RelayCore

/// Audit times as text: the same as Foundation's ISO 8601 formatter, to the millisecond, across the years a relay
/// sees and the edges of the calendar arithmetic.
@Suite struct AuditTimeTests {
    @Test func textMatchesFoundationsISO8601ToTheMillisecond() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        // 1970 to 2200, with the leap days and year ends in it, and random instants in between.
        var instants: [Int64] = [0, 1, 999, 86_399_999, 951_782_400_000, 978_307_199_999, 4_102_444_800_000]
        for _ in 0..<2_000 { instants.append(Int64.random(in: 0...7_258_118_400_000, using: &generator)) }
        for millis in instants {
            let expected = formatter.string(from: AuditTime.date(millis: millis))
            #expect(AuditTime.iso8601(millis: millis) == expected, "\(millis)")
            #expect(AuditTime.day(millis: millis) == String(expected.prefix(10)), "\(millis)")
        }
    }

    @Test func beforeNineteenSeventyAndOutsideFourDigitYears() {
        #expect(AuditTime.iso8601(millis: -1) == "1969-12-31T23:59:59.999Z")
        #expect(AuditTime.day(millis: -1) == "1969-12-31")
        #expect(AuditTime.iso8601(millis: -62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        // Beyond year 9999 and before year 0: the digits the year needs, and a sign.
        #expect(AuditTime.iso8601(millis: 253_402_300_800_000) == "10000-01-01T00:00:00.000Z")
        #expect(AuditTime.day(millis: 253_402_300_800_000) == "10000-01-01")
        #expect(AuditTime.iso8601(millis: -62_167_219_200_001) == "-0001-12-31T23:59:59.999Z")
    }
}
