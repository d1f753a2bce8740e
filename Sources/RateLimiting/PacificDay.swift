import Foundation
import StoreCalendar

/// A calendar day in US Pacific time (America/Los_Angeles), the day the stores' daily quotas run on: midnight
/// to midnight local time, UTC−8 in winter and UTC−7 in summer, so a day lasts 23 hours in March and 25 in
/// November.
///
/// Times come from the system's time zone database (through `PacificTime`); `PostgresQuotaGate` asks the database
/// server instead (`quota_pacific_day` in `sql/0001_init.sql`), so every host agrees on the day.
public struct PacificDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The year.
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...31.
    public let day: Int

    /// The zone the stores' days run in.
    public static var timeZone: TimeZone { PacificTime.timeZone }

    /// The day with this date. The date is not validated beyond what the calendar normalises.
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The Pacific day that contains `instant`.
    public init(containing instant: Date) {
        self.init(PacificTime.date(containing: instant))
    }

    private init(_ date: CivilDate) {
        self.init(year: date.year, month: date.month, day: date.day)
    }

    /// Parses `YYYY-MM-DD` (how PostgreSQL prints a `date`).
    public init?(isoDate text: String) {
        guard let date = CivilDate(iso: text) else { return nil }
        self.init(date)
    }

    /// Local midnight at the start of the day.
    public var start: Date { PacificTime.start(of: civilDate) }

    /// Local midnight at the end of the day: the start of `next`.
    public var end: Date { next.start }

    /// The following day.
    public var next: PacificDay { PacificDay(civilDate.adding(days: 1)) }

    /// The day's date, normalised as the calendar does (the 32nd of a month is the 1st of the next).
    private var civilDate: CivilDate {
        CivilDate(daysSinceEpoch: CivilDate.daysSinceEpoch(year: year, month: month, day: day))
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
