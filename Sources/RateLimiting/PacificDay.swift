import Foundation

/// A calendar day in US Pacific time (America/Los_Angeles), the day the stores' daily quotas run on: midnight
/// to midnight local time, UTC−8 in winter and UTC−7 in summer, so a day lasts 23 hours in March and 25 in
/// November.
///
/// Times come from the system's time zone database; `PostgresQuotaGate` asks the database server instead
/// (`quota_pacific_day` in `sql/0001_init.sql`), so every host agrees on the day.
public struct PacificDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The year.
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...31.
    public let day: Int

    /// The zone the stores' days run in.
    public static let timeZone: TimeZone = {
        guard let zone = TimeZone(identifier: "America/Los_Angeles") else {
            preconditionFailure("the time zone database has no America/Los_Angeles")
        }
        return zone
    }()

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }()

    /// The day with this date. The date is not validated beyond what the calendar normalises.
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The Pacific day that contains `instant`.
    public init(containing instant: Date) {
        let parts = Self.calendar.dateComponents([.year, .month, .day], from: instant)
        self.init(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1)
    }

    /// Parses `YYYY-MM-DD` (how PostgreSQL prints a `date`).
    public init?(isoDate text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Local midnight at the start of the day.
    public var start: Date {
        let components = DateComponents(year: year, month: month, day: day)
        guard let start = Self.calendar.date(from: components) else {
            preconditionFailure("the calendar cannot place \(self)")
        }
        return start
    }

    /// Local midnight at the end of the day: the start of `next`.
    public var end: Date { next.start }

    /// The following day.
    public var next: PacificDay {
        guard let following = Self.calendar.date(byAdding: .day, value: 1, to: start) else {
            preconditionFailure("the calendar cannot add a day to \(self)")
        }
        return PacificDay(containing: following)
    }

    /// How long the day lasts: 24 hours, or 23 / 25 on the days daylight saving time begins / ends.
    public var length: Duration { .seconds(end.timeIntervalSince(start)) }

    /// `2026-03-08`.
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: PacificDay, rhs: PacificDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}
