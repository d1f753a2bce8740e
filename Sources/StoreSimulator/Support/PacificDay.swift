import Foundation

/// The US-Pacific calendar day that Google's daily quotas run on (midnight to midnight America/Los_Angeles,
/// UTC−8 or UTC−7 with daylight saving time), from the system's time zone database.
public enum PacificDay {
    /// The time zone; falls back to UTC−8 only if the system has no tz database.
    static let timeZone = TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(secondsFromGMT: -8 * 3600)!

    /// A day number (days since 1970-01-01 in Pacific local time) for an instant.
    /// - Parameter millis: milliseconds since 1970 (UTC).
    public static func number(millis: Int64) -> Int64 {
        let date = Date(timeIntervalSince1970: Double(millis) / 1000)
        let offset = Int64(timeZone.secondsFromGMT(for: date))
        let local = millis + offset * 1000
        return local >= 0 ? local / 86_400_000 : (local - 86_399_999) / 86_400_000
    }

    /// The first instant (UTC milliseconds) of the Pacific day after the one holding `millis`: when a daily quota
    /// turns over.
    public static func nextMidnight(after millis: Int64) -> Int64 {
        let day = number(millis: millis)
        // The local midnight is within a few hours of UTC day boundary + 7 or 8 hours: search the candidates.
        let guess = (day + 1) * 86_400_000
        var best = Int64.max
        for hours in [7, 8] {
            let candidate = guess + Int64(hours) * 3_600_000
            if number(millis: candidate) == day + 1, number(millis: candidate - 1) == day {
                best = min(best, candidate)
            }
        }
        return best == .max ? guess + 8 * 3_600_000 : best
    }
}

extension PacificDay {
    /// `YYYY-MM-DD` of a day number.
    static func date(dayNumber: Int64) -> String {
        String(TimeFormat.rfc3339(millis: dayNumber * 86_400_000, fractionDigits: 0).prefix(10))
    }
}
