import Foundation

/// A duration written as a whole number and one of the units `s`, `m`, `h`, `d` or `w` (lower case): `90s`, `30m`,
/// `72h`, `2d`, `1w`. Nothing else is accepted: a bare number, another unit (`3x`, `72H`, `1y`) or a value above
/// ``maximum`` is an error (exit 78 in the configuration file, 64 on the command line), never a guess.
public struct ConfigDuration: Decodable, Sendable, Equatable, CustomStringConvertible {
    /// The length in seconds.
    public var seconds: Int64

    /// The longest duration accepted anywhere: ten years (`3650d`).
    public static let maximum: Int64 = 3650 * 86_400

    /// What the parser says about text it does not accept.
    public static let expected =
        "expected a duration: a whole number and a unit s, m, h, d or w, such as 90s, 30m, 72h, 2d or 1w"

    /// A duration of `seconds`.
    public static func seconds(_ seconds: Int64) -> ConfigDuration { ConfigDuration(seconds: seconds) }
    /// A duration of `hours`.
    public static func hours(_ hours: Int64) -> ConfigDuration { ConfigDuration(seconds: hours * 3600) }

    /// Creates a duration.
    public init(seconds: Int64) { self.seconds = seconds }

    /// Parses `90s`, `30m`, `72h`, `2d` or `1w`.
    /// - Returns: `nil` when the text is anything else (see ``problem(with:)`` for why).
    public init?(text: String) {
        guard case .success(let duration) = Self.parse(text) else { return nil }
        self = duration
    }

    /// The duration `text` names, or one line saying why it names none (without the text, which may have come
    /// from a substituted secret).
    public static func parse(_ text: String) -> Result<ConfigDuration, ReconcilerError> {
        func failure(_ reason: String) -> Result<ConfigDuration, ReconcilerError> {
            .failure(ReconcilerError(.configuration, reason))
        }
        guard let unit = text.last, let multiplier = units[unit] else {
            if text.allSatisfy(\.isASCIIDigitCharacter) && !text.isEmpty {
                return failure("a bare number has no unit; \(expected)")
            }
            return failure(expected)
        }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigitCharacter) else {
            return failure(expected)
        }
        guard let value = Int64(digits), value <= maximum / multiplier else {
            return failure("out of range: at most 3650d (ten years)")
        }
        return .success(ConfigDuration(seconds: value * multiplier))
    }

    private static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let text = try? container.decode(String.self) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: Self.expected)
        }
        switch Self.parse(text) {
        case .success(let duration): self = duration
        case .failure(let error):
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    public var description: String {
        if seconds % 86_400 == 0 && seconds > 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 && seconds > 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 && seconds > 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
