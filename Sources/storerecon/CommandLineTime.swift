import Foundation
import Postgres
import Reconciler

/// A time given on the command line (`backfill --since/--until`): RFC 3339 with its UTC offset, a date that exists,
/// as `import` reads times; anything else is a usage error (exit 64) naming the option.
enum CommandLineTime {
    /// Parses `text` for `option`.
    /// - Throws: `ReconcilerError` (`.usage`) saying what is wrong.
    static func parse(_ text: String, option: String) throws -> Date {
        let example = "an RFC 3339 time such as 2026-11-01T00:00:00Z"
        guard let date = PostgresTimestamp.parse(text), date != .distantPast, date != .distantFuture else {
            // A day its month does not have (2026-02-30) is named as such; anything else is not a time at all.
            let parts = text.prefix(10).split(separator: "-").compactMap { Int($0) }
            let named = parts.count == 3 && (1...12).contains(parts[1]) && (1...31).contains(parts[2]) && !exists(text)
            throw ReconcilerError(
                .usage, "\(option) \"\(clip(text))\": \(named ? "no such date" : "expected \(example)")")
        }
        guard PostgresTimestamp.hasOffset(text) else {
            throw ReconcilerError(.usage, "\(option) \"\(clip(text))\": no UTC offset; add Z or +hh:mm")
        }
        return date
    }

    /// Parses `--since` and an optional `--until`, which must come after it.
    static func window(since: String, until: String?) throws -> (Date, Date?) {
        let start = try parseSince(since)
        guard let until else { return (start, nil) }
        let end = try parse(until, option: "--until")
        guard end > start else { throw ReconcilerError(.usage, "--until must be after --since") }
        return (start, end)
    }

    /// A `--since` time: one in the future would read an empty window and end as if there were nothing to do.
    static func parseSince(_ text: String) throws -> Date {
        let start = try parse(text, option: "--since")
        guard start < Date() else { throw ReconcilerError(.usage, "--since \(clip(text)) is in the future") }
        return start
    }

    /// Whether the text's `YYYY-MM-DD` names a day of the Gregorian calendar (2026-02-30 does not).
    static func exists(_ text: String) -> Bool {
        let parts = text.prefix(10).split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return DateComponents(year: parts[0], month: parts[1], day: parts[2]).isValidDate(in: calendar)
    }

    private static func clip(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(37)) + "..." : text
    }
}
