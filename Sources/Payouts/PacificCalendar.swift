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
        let lengths = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        let last = lengths[max(0, min(11, number - 1))]
        return (String(format: "%04d-%02d-01", year, number), String(format: "%04d-%02d-%02d", year, number, last))
    }

    private static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// `YYYY-MM` of `date` in US Pacific time.
    public static func month(of date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month], from: date)
        return String(format: "%04d-%02d", parts.year ?? 0, parts.month ?? 0)
    }

    /// Google's `Oct 3, 2026` and `4:05:06 AM PDT` as a moment (PDT is UTC−7, PST UTC−8; another zone name or none
    /// reads the time as US Pacific). Integer arithmetic: a million rows must not build a million calendars.
    static func googleDate(_ date: String, time: String) -> Date? {
        let dateParts = date.split(whereSeparator: { $0 == " " || $0 == "," })
        guard dateParts.count == 3, let month = monthNames.firstIndex(of: String(dateParts[0].prefix(3))),
            let day = Int(dateParts[1]), let year = Int(dateParts[2]), (1...31).contains(day),
            day <= Int(bounds(ofMonth: String(format: "%04d-%02d", year, month + 1)).1.suffix(2))!
        else { return nil }
        var seconds = 0
        var offset: Int?
        if !time.isEmpty {
            let timeParts = time.split(separator: " ")
            let clock = timeParts.first?.split(separator: ":").compactMap { Int($0) } ?? []
            guard clock.count == 3, (1...12).contains(clock[0]), (0...59).contains(clock[1]),
                (0...60).contains(clock[2])
            else { return nil }
            let meridiem = timeParts.count > 1 ? timeParts[1].uppercased() : ""
            guard meridiem == "AM" || meridiem == "PM" else { return nil }
            seconds = (clock[0] % 12 + (meridiem == "PM" ? 12 : 0)) * 3600 + clock[1] * 60 + clock[2]
            if timeParts.count > 2 {
                switch timeParts[2] {
                case "PDT": offset = -7 * 3600
                case "PST": offset = -8 * 3600
                default: break
                }
            }
        }
        let local = Double(daysFromCivil(year, month + 1, day) * 86_400 + seconds)
        let zoneOffset = offset ?? zone.secondsFromGMT(for: Date(timeIntervalSince1970: local + 8 * 3600))
        return Date(timeIntervalSince1970: local - Double(zoneOffset))
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
        let (_, last) = bounds(ofMonth: String(format: "%04d-%02d", year, month))
        guard day >= 1, day <= Int(last.suffix(2))! else { return nil }
        return String(format: "%04d-%02d-%02d", year, month, day)
    }
}
