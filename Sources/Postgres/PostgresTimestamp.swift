import Foundation
import StoreCalendar

/// Formats and parses `timestamptz` text without Foundation's calendar machinery, which is slow on hot paths.
///
/// Output is ISO 8601 in UTC with microseconds (PostgreSQL's own precision). Input accepts what the server sends
/// for any `TimeZone` and `DateStyle=ISO`: `2026-11-22 04:32:50.123456+00`, offsets such as `-07` or `+05:30`,
/// and `infinity` / `-infinity` (read as `Date.distantFuture` / `Date.distantPast`); also RFC 3339's lower-case `t`
/// and `z`. A time without an offset is read as UTC (``hasOffset(_:)`` tells whether it had one).
public enum PostgresTimestamp {
    /// Formats a date as `YYYY-MM-DDTHH:MM:SS.mmmZ`: how every time a person reads is printed (logs, `status`,
    /// reports, `quarantine list`, backfill progress), to the millisecond, the stores' own precision.
    public static func millis(_ date: Date) -> String {
        String(format(date).prefix(23)) + "Z"
    }

    /// Formats a date as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    public static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let parts = CivilDate.parts(ofDaysSinceEpoch: Int(days))
        let (year, month, day) = (Int64(parts.year), Int64(parts.month), Int64(parts.day))
        // Written digit by digit into one buffer: pages of a thousand rows format two times each, and building the
        // text from padded pieces cost more than the rest of the row.
        guard (0...9999).contains(year) else {
            return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
                + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "." + pad(fraction, 6) + "Z"
        }
        return String(unsafeUninitializedCapacity: 27) { buffer in
            func put(_ value: Int64, _ width: Int, at offset: Int) {
                var rest = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                    rest /= 10
                }
            }
            put(year, 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(month, 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(day, 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17)
            buffer[19] = UInt8(ascii: ".")
            put(fraction, 6, at: 20)
            buffer[26] = UInt8(ascii: "Z")
            return 27
        }
    }

    /// Parses a timestamp as PostgreSQL prints it.
    /// - Returns: `nil` when the text is not a timestamp.
    public static func parse(_ text: String) -> Date? {
        if text == "infinity" { return .distantFuture }
        if text == "-infinity" { return .distantPast }
        var scanner = Scanner(bytes: Array(text.utf8))
        if scanner.bytes.count < 19 { return nil }
        // Years beyond 9999 and BC dates do not occur in this project's data; reject them rather than misread.
        guard let year = scanner.number(4), scanner.expect(45), let month = scanner.number(2), scanner.expect(45),
            let day = scanner.number(2), scanner.expect(32, 84, 116), let hour = scanner.number(2), scanner.expect(58),
            let minute = scanner.number(2), scanner.expect(58), let second = scanner.number(2)
        else { return nil }
        // A day the month does not have (February 31st) is refused, not rolled over into the next month.
        guard (1...12).contains(month), day >= 1, day <= CivilDate.days(inMonth: Int(month), of: Int(year)),
            hour < 24, minute < 60, second < 61
        else { return nil }
        guard let micros = scanner.microseconds(), let offsetSeconds = scanner.offsetSeconds(), scanner.atEnd else {
            return nil
        }
        let days = Int64(CivilDate.daysSinceEpoch(year: Int(year), month: Int(month), day: Int(day)))
        let total = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(total) + Double(micros) / 1_000_000)
    }

    /// A read position in a timestamp's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        /// Exactly `digits` decimal digits as a number.
        mutating func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
                index += 1
            }
            return value
        }

        /// Takes the next byte if it is one of `characters`.
        mutating func expect(_ characters: UInt8...) -> Bool {
            guard index < bytes.count, characters.contains(bytes[index]) else { return false }
            index += 1
            return true
        }

        /// The fraction after a `.` as microseconds (digits past the sixth dropped), 0 without one; `nil` for a `.`
        /// with no digit.
        mutating func microseconds() -> Int64? {
            guard index < bytes.count && bytes[index] == 46 else { return 0 }
            index += 1
            var micros: Int64 = 0
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if digits < 6 { micros = micros * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
            return micros
        }

        /// The offset east of UTC in seconds: `Z`, `z`, `±hh`, `±hh:mm` or `±hh:mm:ss` (colons optional), 0 at the
        /// end of the text; `nil` for anything else.
        mutating func offsetSeconds() -> Int64? {
            guard index < bytes.count else { return 0 }
            let sign = bytes[index]
            index += 1
            if sign == 90 || sign == 122 { return 0 }  // Z or z
            guard sign == 43 || sign == 45, let hours = number(2) else { return nil }
            var minutes: Int64 = 0
            var seconds: Int64 = 0
            if index < bytes.count {
                _ = expect(58)
                guard let parsed = number(2) else { return nil }
                minutes = parsed
                if index < bytes.count {
                    _ = expect(58)
                    guard let parsedSeconds = number(2) else { return nil }
                    seconds = parsedSeconds
                }
            }
            // UTC offsets run from -12:00 to +14:00; a larger one is not a time zone's.
            guard hours <= 15, minutes < 60, seconds < 60 else { return nil }
            return (hours * 3600 + minutes * 60 + seconds) * (sign == 45 ? -1 : 1)
        }
    }

    /// Whether a timestamp's text names its offset (`Z`, `z`, `+05:30`, `-07`) after the time of day.
    public static func hasOffset(_ text: String) -> Bool {
        text.utf8.dropFirst(19).contains { $0 == 90 || $0 == 122 || $0 == 43 || $0 == 45 }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
