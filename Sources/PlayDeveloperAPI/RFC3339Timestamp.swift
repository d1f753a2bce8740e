import Foundation
import StoreCalendar

/// An instant written as an RFC 3339 date-time (Google's `google-datetime` format), such as
/// `2026-11-20T10:15:30.123456789Z` or `2026-11-20T02:15:30-08:00`.
///
/// Parsing is strict: `T` (or `t`) between date and time, 0, 3, 6 or 9 fractional digits, `Z` (or `z`) or a
/// `±hh:mm` offset, and a real calendar date from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z; anything
/// else gives `nil`. A leap second (`:60`) is rejected.
/// The instant keeps whole nanoseconds, so nothing is rounded.
///
/// See [Google's JSON mapping for Timestamp](https://protobuf.dev/reference/protobuf/google.protobuf/#timestamp).
public struct RFC3339Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    public var secondsSinceEpoch: Int64
    /// Nanoseconds past ``secondsSinceEpoch``, 0 ..< 1_000_000_000.
    public var nanoseconds: Int32

    /// Creates an instant from its parts.
    public init(secondsSinceEpoch: Int64, nanoseconds: Int32 = 0) {
        self.secondsSinceEpoch = secondsSinceEpoch
        self.nanoseconds = nanoseconds
    }

    /// Parses RFC 3339 text, or returns `nil` when it is not a valid date-time in the accepted form.
    public init?(_ text: some StringProtocol) {
        let parsed =
            text.utf8.withContiguousStorageIfAvailable { Self.parse($0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { Self.parse($0) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The instant as a `Date` (sub-microsecond digits may round).
    public var date: Date {
        Date(timeIntervalSince1970: Double(secondsSinceEpoch) + Double(nanoseconds) / 1e9)
    }

    /// Milliseconds since the epoch, rounded down.
    public var millisecondsSinceEpoch: Int64 { secondsSinceEpoch * 1000 + Int64(nanoseconds / 1_000_000) }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.secondsSinceEpoch, lhs.nanoseconds) < (rhs.secondsSinceEpoch, rhs.nanoseconds)
    }

    /// The canonical form: UTC, `Z`, and 0, 3, 6 or 9 fractional digits (the fewest that keep every digit).
    public var description: String {
        let days = secondsSinceEpoch >= 0 ? secondsSinceEpoch / 86_400 : (secondsSinceEpoch - 86_399) / 86_400
        let secondOfDay = secondsSinceEpoch - days * 86_400
        let date = CivilDate(daysSinceEpoch: Int(days))
        let (year, month, day) = (Int64(date.year), Int64(date.month), Int64(date.day))
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
        text += "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if nanoseconds != 0 {
            let nanos = Int64(nanoseconds)
            if nanos % 1_000_000 == 0 {
                text += "." + pad(nanos / 1_000_000, 3)
            } else if nanos % 1000 == 0 {
                text += "." + pad(nanos / 1000, 6)
            } else {
                text += "." + pad(nanos, 9)
            }
        }
        return text + "Z"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not an RFC 3339 date-time: \(text.prefix(40))")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    // MARK: Parsing

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Self? {
        // yyyy-mm-ddThh:mm:ss is 19 bytes; the shortest valid text adds "Z".
        guard bytes.count >= 20 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<start + count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit <= 9 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == UInt8(ascii: "-"), let month = number(5, 2),
            bytes[7] == UInt8(ascii: "-"), let day = number(8, 2),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            let hour = number(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = number(14, 2),
            bytes[16] == UInt8(ascii: ":"), let second = number(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilDate.days(inMonth: Int(month), of: Int(year)), hour <= 23,
            minute <= 59, second <= 59
        else { return nil }

        var index = 19
        var nanos: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") <= 9 { index += 1 }
            let count = index - start
            guard count == 3 || count == 6 || count == 9, let fraction = number(start, count) else { return nil }
            nanos = fraction * (count == 3 ? 1_000_000 : count == 6 ? 1000 : 1)
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            guard bytes.count - index == 6, let offsetHours = number(index + 1, 2),
                bytes[index + 3] == UInt8(ascii: ":"),
                let offsetMinutes = number(index + 4, 2), offsetHours <= 23, offsetMinutes <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = Int64(CivilDate.daysSinceEpoch(year: Int(year), month: Int(month), day: Int(day)))
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        // Google's Timestamp range, which an offset could otherwise push past (year 0000 or 10000).
        guard (-62_135_596_800...253_402_300_799).contains(seconds) else { return nil }
        return Self(secondsSinceEpoch: seconds, nanoseconds: Int32(nanos))
    }
}
