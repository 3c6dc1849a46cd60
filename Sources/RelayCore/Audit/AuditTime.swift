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
        var days = millis / millisPerDay
        var rest = millis % millisPerDay
        if rest < 0 {  // floor division, for times before 1970
            days -= 1
            rest += millisPerDay
        }
        let (year, month, day) = civil(fromDays: days)
        let hour = rest / 3_600_000
        let minute = rest / 60_000 % 60
        let second = rest / 1000 % 60
        let milli = rest % 1000
        let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        return "\(date)T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(milli, 3))Z"
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
