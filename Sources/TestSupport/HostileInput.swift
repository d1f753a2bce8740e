/// A seeded pseudo-random generator (SplitMix64): the same seed gives the same cases on every machine, so a failing
/// case can be replayed from its seed and index.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// Hostile variations of valid samples for property tests of parsers: bit flips, truncation, deletion and
/// duplication of spans, and insertion of quotes, backslashes, NUL bytes, invalid UTF-8, odd Unicode, long runs,
/// deep nesting and huge numbers. Sizes are bounded so thousands of cases run in seconds.
public struct HostileInput: Sendable {
    /// The generator; draw from it for choices of your own so one seed fixes the whole case.
    public var random: SeededGenerator

    /// Mutations drawn from `seed`.
    public init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    /// Strings that break naive code: quoting and escaping characters, NUL, SQL and format-string fragments,
    /// right-to-left and zero-width marks, combining characters, emoji sequences, a BOM and non-BMP scalars.
    public static let oddStrings: [String] = [
        "", " ", "\"", "\"\"", "'", "\\", "\\\\", "\\\"", "\\u0000", "\0", "a\0b", "\t", "\r\n", "\n", ",", ";",
        "'; DROP TABLE refund; --", "%s%n%x", "${HOME}", "$1", "<script>alert(1)</script>", "&amp;",
        "\u{202E}gnp.exe", "\u{200B}", "\u{200D}", "e\u{301}\u{301}\u{301}", "👨‍👩‍👧‍👦", "🏳️‍🌈", "\u{FEFF}",
        "\u{FFFD}", "\u{10FFFF}", "\u{1D11E}", "Ǆǅǆ", "ﬀ", "İı", "Ω", "\u{7F}", "\u{85}", "\u{2028}\u{2029}",
        "null", "true", "-0", "1e999999", "99999999999999999999999999999999", "NaN", "-Infinity",
    ]

    /// Byte sequences that are not valid UTF-8 (overlong NUL, lone continuation, surrogate, out of range, cut).
    public static let invalidUTF8: [[UInt8]] = [
        [0xFF], [0xC0, 0x80], [0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90], [0xE2],
    ]

    /// Structural bytes of JSON, YAML and CSV.
    static let structural: [UInt8] = Array("{}[]:,\"\\'.-+eE0 \t\n\r&*!|>#%@`=".utf8)

    /// A random integer in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    /// A random element.
    public mutating func pick<T>(_ values: [T]) -> T {
        values[int(0...(values.count - 1))]
    }

    /// A field value built to hurt: odd strings glued together, sometimes with a long run of one character.
    /// - Parameter allowNUL: whether the value may contain a NUL (PostgreSQL text cannot hold one).
    public mutating func hostileString(allowNUL: Bool = true, maxRun: Int = 5000) -> String {
        var text = ""
        for _ in 0..<int(1...4) {
            switch int(0...5) {
            case 0: text += String(repeating: pick(["A", "\"", "\\", "é", "🏳️‍🌈", ","]), count: int(1...maxRun))
            case 1: text += String(int(Int.min...Int.max))
            default: text += pick(Self.oddStrings)
            }
        }
        if !allowNUL { text = text.replacingOccurrences(of: "\0", with: "") }
        return text.isEmpty ? "\u{202E}" : text
    }

    /// One to three mutations of `sample`.
    public mutating func mutate(_ sample: [UInt8]) -> [UInt8] {
        var bytes = sample
        for _ in 0..<int(1...3) { mutateOnce(&bytes) }
        return bytes
    }

    /// One to three mutations of `sample`'s UTF-8 (invalid sequences become U+FFFD).
    public mutating func mutate(_ sample: String) -> String {
        String(decoding: mutate(Array(sample.utf8)), as: UTF8.self)
    }

    private mutating func mutateOnce(_ bytes: inout [UInt8]) {
        let position = int(0...bytes.count)
        switch int(0...11) {
        case 0 where !bytes.isEmpty:
            let index = int(0...(bytes.count - 1))
            bytes[index] ^= 1 << UInt8(int(0...7))
        case 1:
            bytes.removeSubrange(position...)
        case 2 where !bytes.isEmpty:
            let end = min(bytes.count, position + int(1...16))
            bytes.removeSubrange(position..<end)
        case 3 where !bytes.isEmpty:
            let start = int(0...(bytes.count - 1))
            let end = min(bytes.count, start + int(1...64))
            bytes.insert(contentsOf: bytes[start..<end], at: position)
        case 4:
            bytes.insert(pick(Self.structural), at: position)
        case 5:
            bytes.insert(contentsOf: Array(pick(Self.oddStrings).utf8), at: position)
        case 6:
            bytes.insert(contentsOf: pick(Self.invalidUTF8), at: position)
        case 7:
            bytes.insert(
                contentsOf: [UInt8](repeating: pick(Array("A\"\\0[{ ".utf8)), count: int(1...20_000)), at: position)
        case 8:
            let depth = int(1...2000)
            let open = pick(Array("[{".utf8))
            bytes.insert(contentsOf: [UInt8](repeating: open, count: depth), at: position)
        case 9:
            let digits = String((0..<int(1...400)).map { _ in Character(String(int(0...9))) })
            bytes.insert(contentsOf: Array((pick(["", "-", "0.", "1e"]) + digits).utf8), at: position)
        case 10 where !bytes.isEmpty:
            bytes[int(0...(bytes.count - 1))] = UInt8(truncatingIfNeeded: int(0...255))
        default:
            bytes.insert(0, at: position)
        }
    }
}
