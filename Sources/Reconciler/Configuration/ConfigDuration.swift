import Foundation

/// A duration written in configuration as `90s`, `30m`, `72h` or `2d` (a bare number means seconds).
public struct ConfigDuration: Decodable, Sendable, Equatable, CustomStringConvertible {
    /// The length in seconds.
    public var seconds: Int64

    /// A duration of `seconds`.
    public static func seconds(_ seconds: Int64) -> ConfigDuration { ConfigDuration(seconds: seconds) }
    /// A duration of `hours`.
    public static func hours(_ hours: Int64) -> ConfigDuration { ConfigDuration(seconds: hours * 3600) }

    /// Creates a duration.
    public init(seconds: Int64) { self.seconds = seconds }

    /// Parses `90s`, `30m`, `72h`, `2d` or a bare number of seconds.
    /// - Returns: `nil` when the text is none of those or negative.
    public init?(text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let last = trimmed.last else { return nil }
        let multiplier: Int64
        var digits = Substring(trimmed)
        switch last {
        case "s": multiplier = 1
        case "m": multiplier = 60
        case "h": multiplier = 3600
        case "d": multiplier = 86_400
        default: multiplier = 1
        }
        if !last.isNumber { digits = digits.dropLast() }
        guard let value = Int64(digits), value >= 0, value <= Int64.max / multiplier else { return nil }
        seconds = value * multiplier
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self), number >= 0 {
            seconds = number
            return
        }
        let text = try container.decode(String.self)
        guard let parsed = ConfigDuration(text: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected a duration such as 90s, 30m, 72h or 2d")
        }
        self = parsed
    }

    public var description: String {
        if seconds % 86_400 == 0 && seconds > 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 && seconds > 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 && seconds > 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
