/// A day of the proleptic Gregorian calendar, with no time zone: the project's one conversion between dates and day
/// numbers (Howard Hinnant's `days_from_civil` and `civil_from_days`, exact for every Int64 day).
public struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The year (`1` is 1 CE; `0` is 1 BCE).
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...31.
    public let day: Int

    /// The date with these parts, or `nil` when no such day exists (month 13, 31 April, 29 February 2026).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, of: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `days` days after 1970-01-01 (before it when negative).
    public init(daysSinceEpoch days: Int) {
        (year, month, day) = Self.parts(ofDaysSinceEpoch: days)
    }

    /// Parses `YYYY-MM-DD` (four, two and two digits), or returns `nil` when it is not that or not a real day.
    public init?(iso text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = Self.digits(bytes[0..<4]), let month = Self.digits(bytes[5..<7]),
            let day = Self.digits(bytes[8..<10])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Days since 1970-01-01 (negative before it).
    public var daysSinceEpoch: Int { Self.daysSinceEpoch(year: year, month: month, day: day) }

    /// The date `count` days later (earlier when negative).
    public func adding(days count: Int) -> CivilDate { CivilDate(daysSinceEpoch: daysSinceEpoch + count) }

    /// `2026-03-08`: the year padded to four digits.
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// Whether `year` has a 29 February.
    public static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// The number of days in `month` (1...12) of `year`.
    public static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a date whose parts the caller has checked (`days_from_civil`). Parsers of hot paths
    /// call it without building a `CivilDate`.
    @inlinable
    public static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year, month and day of `days` since 1970-01-01 (`civil_from_days`).
    @inlinable
    public static func parts(ofDaysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
