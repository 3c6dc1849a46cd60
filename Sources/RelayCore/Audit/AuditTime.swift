package import Foundation

/// Audit times: milliseconds since the UNIX epoch, UTC.
///
/// Records keep an integer so that hashing never depends on how a `Double` prints. Dates convert by rounding to the
/// nearest millisecond (not truncating): `Date(timeIntervalSince1970: ms / 1000)` is not always exact in binary, and
/// rounding gives the same integer back, whereas truncating could lose a millisecond on the way.
package enum AuditTime {
    /// `date` in whole milliseconds since 1970 (rounded to the nearest; clamped to `Int64`'s range).
    package static func millis(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return value.sign == .minus ? .min : .max }
        // 2^63 is exactly representable, so `>=` catches everything `Int64(_:)` would trap on.
        if value >= 9_223_372_036_854_775_808.0 { return .max }
        if value < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(value)
    }

    package static func date(millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    private static let millisPerDay: Int64 = 86_400_000

    /// ISO 8601 in UTC with milliseconds, e.g. `2027-01-15T08:00:00.000Z`.
    ///
    /// Computed with integer arithmetic (Howard Hinnant's `civil_from_days`) rather than a date formatter, so the
    /// text is exact, identical on every platform and cheap enough for millions of lines.
    package static func iso8601(millis: Int64) -> String {
        let (days, rest) = split(millis)
        let (year, month, day) = civil(fromDays: days)
        let hour = rest / 3_600_000
        let minute = rest / 60_000 % 60
        let second = rest / 1000 % 60
        let milli = rest % 1000
        guard (0...9999).contains(year) else {
            let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
            return "\(date)T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(milli, 3))Z"
        }
        // Written digit by digit into the string's own storage: every receipt's usage day and every audit record's
        // time pass here (`relay-bench relay`: the interpolated form was about 1 % of the relay's CPU).
        return String(unsafeUninitializedCapacity: 24) { text in
            writeDate(year, month, day, into: text)
            text[10] = UInt8(ascii: "T")
            write(hour, width: 2, into: text, at: 11)
            text[13] = UInt8(ascii: ":")
            write(minute, width: 2, into: text, at: 14)
            text[16] = UInt8(ascii: ":")
            write(second, width: 2, into: text, at: 17)
            text[19] = UInt8(ascii: ".")
            write(milli, width: 3, into: text, at: 20)
            text[23] = UInt8(ascii: "Z")
            return 24
        }
    }

    /// The UTC day of `millis` as `YYYY-MM-DD`: the part of ``iso8601(millis:)`` before its `T`.
    package static func day(millis: Int64) -> String {
        let (year, month, day) = civil(fromDays: split(millis).days)
        guard (0...9999).contains(year) else { return String(iso8601(millis: millis).prefix { $0 != "T" }) }
        return String(unsafeUninitializedCapacity: 10) { text in
            writeDate(year, month, day, into: text)
            return 10
        }
    }

    /// Days since 1970 and milliseconds into the day, by floor division (for times before 1970 too).
    private static func split(_ millis: Int64) -> (days: Int64, rest: Int64) {
        var days = millis / millisPerDay
        var rest = millis % millisPerDay
        if rest < 0 {
            days -= 1
            rest += millisPerDay
        }
        return (days, rest)
    }

    /// `YYYY-MM-DD` into the first ten bytes; the year is within 0...9999.
    private static func writeDate(
        _ year: Int64, _ month: Int64, _ day: Int64, into text: UnsafeMutableBufferPointer<UInt8>
    ) {
        write(year, width: 4, into: text, at: 0)
        text[4] = UInt8(ascii: "-")
        write(month, width: 2, into: text, at: 5)
        text[7] = UInt8(ascii: "-")
        write(day, width: 2, into: text, at: 8)
    }

    /// `value` (not negative, below 10^`width`) as `width` zero-padded decimal digits from `offset`.
    private static func write(_ value: Int64, width: Int, into text: UnsafeMutableBufferPointer<UInt8>, at offset: Int)
    {
        var value = value
        for position in stride(from: offset + width - 1, through: offset, by: -1) {
            text[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
    }

    /// Year, month (1–12) and day (1–31) of the proleptic Gregorian calendar, `days` after 1970-01-01.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let padding = String(repeating: "0", count: max(0, width - digits.count))
        return (value < 0 ? "-" : "") + padding + digits
    }
}
