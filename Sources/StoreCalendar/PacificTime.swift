import Foundation

/// US Pacific time (America/Los_Angeles), the zone both stores book in and Google's daily quotas run on: UTC−8 in
/// winter, UTC−7 in summer, the change at 02:00 local time, so midnight always exists exactly once.
public enum PacificTime {
    /// The zone's name in the time zone database (and in PostgreSQL's `AT TIME ZONE`).
    public static let identifier = "America/Los_Angeles"

    /// The zone.
    public static let timeZone: TimeZone = {
        guard let zone = TimeZone(identifier: identifier) else {
            preconditionFailure("the time zone database has no \(identifier)")
        }
        return zone
    }()

    /// The Pacific date that contains `instant`.
    public static func date(containing instant: Date) -> CivilDate {
        let seconds = Int(instant.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: instant)
        return CivilDate(daysSinceEpoch: Int((Double(seconds) / 86_400).rounded(.down)))
    }

    /// Local midnight at the start of `date`.
    public static func start(of date: CivilDate) -> Date {
        let midnight = date.daysSinceEpoch * 86_400
        // 08:00 UTC of the same date is 00:00 PST or 01:00 PDT: still before the 02:00 change, so the offset there is
        // the offset at midnight.
        let offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(midnight + 8 * 3600)))
        return Date(timeIntervalSince1970: Double(midnight - offset))
    }
}
