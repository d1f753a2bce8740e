import Foundation
import StoreCalendar

/// The dates of financial reports as the stores print them: Google's `Oct 3, 2026` and `4:05:06 AM PDT` (US Pacific
/// time), Apple's `MM/DD/YYYY`. The calendar arithmetic is `StoreCalendar`'s.
public enum PacificCalendar {
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Google's `Oct 3, 2026` and `4:05:06 AM PDT` as a moment (PDT is UTC−7, PST UTC−8; another zone name or none
    /// reads the time as US Pacific). Read byte by byte with integer arithmetic: a million rows must not build a
    /// million calendars, formatted strings or split arrays.
    static func googleDate(_ date: String, time: String) -> Date? {
        var date = date
        var time = time
        guard let (year, month, day) = date.withUTF8({ googleDay(ByteCursor(bytes: $0)) }) else { return nil }
        var seconds = 0
        var offset: Int?
        if !time.isEmpty {
            guard let (clock, zoneOffset) = time.withUTF8({ googleTime(ByteCursor(bytes: $0)) }) else { return nil }
            seconds = clock
            offset = zoneOffset
        }
        let local = Double(CivilDate.daysSinceEpoch(year: year, month: month, day: day) * 86_400 + seconds)
        let zoneOffset =
            offset ?? PacificTime.timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: local + 8 * 3600))
        return Date(timeIntervalSince1970: local - Double(zoneOffset))
    }

    private static let monthBytes = monthNames.map { Array($0.utf8) }

    /// `Oct 3, 2026` (or `October 3, 2026`) as (2026, 10, 3), or `nil` when it is not a real day.
    private static func googleDay(_ text: ByteCursor) -> (Int, Int, Int)? {
        var cursor = text
        let name = cursor.word()
        guard name.count >= 3,
            let month = monthBytes.firstIndex(where: { $0.elementsEqual(name.prefix(3)) })
        else { return nil }
        cursor.skip { $0 == 0x20 || $0 == 0x2C }
        guard let day = cursor.number() else { return nil }
        cursor.skip { $0 == 0x20 || $0 == 0x2C }
        guard let year = cursor.number(), cursor.atEnd, day >= 1, day <= CivilDate.days(inMonth: month + 1, of: year)
        else {
            return nil
        }
        return (year, month + 1, day)
    }

    /// `4:05:06 AM PDT` as seconds since midnight and the zone's offset from UTC (`nil` for another name or none).
    private static func googleTime(_ text: ByteCursor) -> (Int, Int?)? {
        var cursor = text
        guard let hour = cursor.number(), cursor.take(0x3A), let minute = cursor.number(), cursor.take(0x3A),
            let second = cursor.number(), (1...12).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        cursor.skip { $0 == 0x20 }
        let meridiem = cursor.word()
        guard meridiem.count == 2, let first = meridiem.first.map({ $0 & 0xDF }), first == 0x41 || first == 0x50,
            meridiem.last.map({ $0 & 0xDF }) == 0x4D
        else { return nil }  // AM or PM, any case
        let clock = (hour % 12 + (first == 0x50 ? 12 : 0)) * 3600 + minute * 60 + second
        cursor.skip { $0 == 0x20 }
        let zoneName = cursor.word()
        let offset: Int? =
            zoneName.elementsEqual("PDT".utf8) ? -7 * 3600 : zoneName.elementsEqual("PST".utf8) ? -8 * 3600 : nil
        return (clock, offset)
    }

    /// A read position in a short run of bytes.
    private struct ByteCursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index >= bytes.count }

        /// Moves past every byte that matches.
        mutating func skip(_ matches: (UInt8) -> Bool) {
            while index < bytes.count && matches(bytes[index]) { index += 1 }
        }

        /// Takes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// The bytes up to the next space or comma.
        mutating func word() -> Slice<UnsafeBufferPointer<UInt8>> {
            let start = index
            skip { $0 != 0x20 && $0 != 0x2C }
            return bytes[start..<index]
        }

        /// One to nine decimal digits as a number.
        mutating func number() -> Int? {
            let start = index
            var value = 0
            while index < bytes.count, (0x30...0x39).contains(bytes[index]), index - start < 9 {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
            }
            return index > start ? value : nil
        }
    }

    /// Apple's `MM/DD/YYYY` as `YYYY-MM-DD`, or `nil` when it is not a real date.
    static func appleDay(_ text: String) -> String? {
        let parts = text.split(separator: "/")
        guard parts.count == 3, parts[2].count == 4, let month = Int(parts[0]), let day = Int(parts[1]),
            let year = Int(parts[2]), let date = CivilDate(year: year, month: month, day: day)
        else { return nil }
        return date.description
    }
}
