import Foundation

/// A month of the Gregorian calendar, such as `2026-10`: the month a store books a report in, a tie-out closes, or a
/// payout sync fetches. Written and parsed as `YYYY-MM`.
public struct CalendarMonth: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The year.
    public let year: Int
    /// The month, 1...12.
    public let month: Int

    /// The month `month` (1...12) of `year`; a month outside 1...12 is a programming error.
    public init(year: Int, month: Int) {
        precondition((1...12).contains(month), "month \(month) is not 1...12")
        self.year = year
        self.month = month
    }

    /// Parses `YYYY-MM` (four digits, a hyphen, 01...12).
    /// - Throws: `CalendarError` naming the text.
    public init(_ text: some StringProtocol) throws(CalendarError) {
        let bytes = Array(text.utf8)
        guard bytes.count == 7, bytes[4] == UInt8(ascii: "-"),
            bytes.enumerated().allSatisfy({ $0.offset == 4 || (0x30...0x39).contains($0.element) }),
            let year = Int(String(decoding: bytes[0..<4], as: UTF8.self)),
            let month = Int(String(decoding: bytes[5..<7], as: UTF8.self)), (1...12).contains(month)
        else { throw CalendarError(text: String(text), expected: "YYYY-MM") }
        self.init(year: year, month: month)
    }

    /// The month that contains `date`.
    public init(containing date: CivilDate) {
        self.init(year: date.year, month: date.month)
    }

    /// The US-Pacific month that contains `instant` (Google's booking month).
    public init(pacificMonthOf instant: Date) {
        self.init(containing: PacificTime.date(containing: instant))
    }

    /// The month `count` months later (earlier when negative).
    public func advanced(by count: Int) -> CalendarMonth {
        let index = year * 12 + (month - 1) + count
        let year = index >= 0 ? index / 12 : (index - 11) / 12
        return CalendarMonth(year: year, month: index - year * 12 + 1)
    }

    /// The following month.
    public var next: CalendarMonth { advanced(by: 1) }

    /// The month before.
    public var previous: CalendarMonth { advanced(by: -1) }

    /// How many days the month has.
    public var dayCount: Int { CivilDate.days(inMonth: month, of: year) }

    /// The month's first day.
    public var firstDay: CivilDate {
        CivilDate(daysSinceEpoch: CivilDate.daysSinceEpoch(year: year, month: month, day: 1))
    }

    /// The month's last day.
    public var lastDay: CivilDate { firstDay.adding(days: dayCount - 1) }

    /// Local midnight in US Pacific time at the start of the month.
    public var pacificStart: Date { PacificTime.start(of: firstDay) }

    /// Local midnight in US Pacific time at the end of the month: the next month's `pacificStart`.
    public var pacificEnd: Date { next.pacificStart }

    /// `2026-10`: the year padded to four digits.
    public var description: String {
        let year = String(self.year)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + (month < 10 ? "-0" : "-") + String(month)
    }

    public static func < (lhs: CalendarMonth, rhs: CalendarMonth) -> Bool {
        (lhs.year, lhs.month) < (rhs.year, rhs.month)
    }

    /// Decodes `YYYY-MM`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes `YYYY-MM`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Text that is not the date or month it should be. Its description names the text (cut to 40 characters) and the form
/// expected.
public struct CalendarError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text that was read.
    public let text: String
    /// The form expected, such as `YYYY-MM`.
    public let expected: String

    /// The error for `text`, which is not in the form `expected`.
    public init(text: String, expected: String) {
        self.text = text
        self.expected = expected
    }

    /// `"2026-13" is not a month: expected YYYY-MM`.
    public var description: String { "\"\(text.prefix(40))\" is not a month: expected \(expected)" }
}
