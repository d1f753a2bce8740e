/// Formats instants as RFC 3339 (`2026-11-01T08:00:00.123Z`) without Foundation's formatters, so that the
/// number of fractional digits can be chosen (Google sends 0, 3, 6 or 9).
enum TimeFormat {
    /// RFC 3339 in UTC.
    /// - Parameters:
    ///   - millis: milliseconds since 1970.
    ///   - fractionDigits: 0, 3, 6 or 9. With 0 the milliseconds must be zero to be exact; digits past the
    ///     milliseconds are `extra` (a sub-millisecond part below half a millisecond, so rounding and truncating
    ///     readers agree).
    ///   - extra: sub-millisecond digits (0..<500 for 6 digits' last three, scaled for 9).
    static func rfc3339(millis: Int64, fractionDigits: Int = 3, extra: Int = 0) -> String {
        let seconds = floorDiv(millis, 1000)
        let milliseconds = Int(millis - seconds * 1000)
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        var text = pad(Int(year), 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        text += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        switch fractionDigits {
        case 0: break
        case 6: text += "." + pad(milliseconds, 3) + pad(extra % 500 / 5, 3)
        case 9: text += "." + pad(milliseconds, 3) + pad(extra % 500, 3) + pad(extra * 7 % 1000, 3)
        default: text += "." + pad(milliseconds, 3)
        }
        return text + "Z"
    }

    private static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). The simulator keeps its own
    /// calendar, apart from `StoreCalendar`, so a calendar bug in the client cannot hide behind the same bug here.
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date of days since 1970-01-01 (Howard Hinnant's algorithm).
    private static func civil(fromDays days: Int64) -> (Int64, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
