import Foundation

/// The dates of financial reports: Google books in US-Pacific calendar months, Apple prints `MM/DD/YYYY`.
public enum PacificCalendar {
    /// US Pacific time.
    public static let zone = TimeZone(identifier: "America/Los_Angeles")!

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The first and last day (`YYYY-MM-DD`) of month `YYYY-MM`.
    public static func bounds(ofMonth month: String) -> (String, String) {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        let year = parts.first ?? 1970
        let number = parts.count > 1 ? parts[1] : 1
        let last = days(inMonth: number, of: year)
        return (String(format: "%04d-%02d-01", year, number), String(format: "%04d-%02d-%02d", year, number, last))
    }

    private static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// `YYYY-MM` of `date` in US Pacific time.
    public static func month(of date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month], from: date)
        return String(format: "%04d-%02d", parts.year ?? 0, parts.month ?? 0)
    }

    /// Google's `Oct 3, 2026` and `4:05:06 AM PDT` as a moment (PDT is UTC−7, PST UTC−8; another zone name or none
    /// reads the time as US Pacific). Integer arithmetic over the bytes: a million rows must not build a million
    /// calendars or formatted strings.
    static func googleDate(_ date: String, time: String) -> Date? {
        guard let (year, month, day) = googleDay(date) else { return nil }
        var seconds = 0
        var offset: Int?
        if !time.isEmpty {
            guard let (clock, zoneName) = googleTime(time) else { return nil }
            seconds = clock
            switch zoneName {
            case "PDT": offset = -7 * 3600
            case "PST": offset = -8 * 3600
            default: break
            }
        }
        let local = Double(daysFromCivil(year, month, day) * 86_400 + seconds)
        let zoneOffset = offset ?? zone.secondsFromGMT(for: Date(timeIntervalSince1970: local + 8 * 3600))
        return Date(timeIntervalSince1970: local - Double(zoneOffset))
    }

    /// `Oct 3, 2026` as (2026, 10, 3), or `nil` when it is not a real day.
    private static func googleDay(_ text: String) -> (Int, Int, Int)? {
        let parts = text.utf8.split(whereSeparator: { $0 == 0x20 || $0 == 0x2C })
        guard parts.count == 3, parts[0].count >= 3,
            let month = monthNames.firstIndex(where: { $0.utf8.elementsEqual(parts[0].prefix(3)) }),
            let day = number(parts[1]), let year = number(parts[2]), day >= 1, day <= days(inMonth: month + 1, of: year)
        else { return nil }
        return (year, month + 1, day)
    }

    /// `4:05:06 AM PDT` as seconds since midnight and the zone name (empty when none).
    private static func googleTime(_ text: String) -> (Int, Substring)? {
        let parts = text.split(separator: " ")
        let clock = parts.first?.utf8.split(separator: 0x3A).compactMap(number) ?? []
        guard clock.count == 3, (1...12).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]),
            parts.count > 1
        else { return nil }
        let meridiem = parts[1].uppercased()
        guard meridiem == "AM" || meridiem == "PM" else { return nil }
        let hour = clock[0] % 12 + (meridiem == "PM" ? 12 : 0)
        return (hour * 3600 + clock[1] * 60 + clock[2], parts.count > 2 ? parts[2] : "")
    }

    /// Decimal digits (at most 9) as a number.
    private static func number(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        var value = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// The number of days in `month` (1-12) of `year`.
    static func days(inMonth month: Int, of year: Int) -> Int {
        let lengths = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return lengths[max(0, min(11, month - 1))]
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Apple's `MM/DD/YYYY` as `YYYY-MM-DD`, or `nil` when it is not a real date.
    static func appleDay(_ text: String) -> String? {
        let parts = text.split(separator: "/")
        guard parts.count == 3, parts[2].count == 4, let month = Int(parts[0]), let day = Int(parts[1]),
            let year = Int(parts[2]), (1...12).contains(month)
        else { return nil }
        guard day >= 1, day <= days(inMonth: month, of: year) else { return nil }
        return String(format: "%04d-%02d-%02d", year, month, day)
    }
}
