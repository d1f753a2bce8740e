/// A small seeded pseudo-random generator (SplitMix64), so that a scenario, a fault schedule or a token is the
/// same for the same seed on every machine and every Swift version. The standard library's distributions
/// (`Int.random(in:using:)`) are not promised to stay stable, so the helpers here draw their own.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator.
    /// - Parameter seed: any 64-bit value; the same seed gives the same sequence.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.finalize(state)
    }

    /// A value in `0..<bound` (`bound` > 0), by multiply-and-shift; the tiny bias does not matter here.
    public mutating func below(_ bound: UInt64) -> UInt64 {
        let product = next().multipliedFullWidth(by: bound)
        return product.high
    }

    /// An integer in `range`.
    public mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        if width == 0 { return Int64(bitPattern: next()) }
        return range.lowerBound &+ Int64(bitPattern: below(width))
    }

    /// An index in `0..<count`.
    public mutating func index(_ count: Int) -> Int {
        Int(below(UInt64(max(count, 1))))
    }

    /// A value in `[0, 1)`.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// The SplitMix64 output function: a good 64-bit mixer on its own.
    static func finalize(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A stable hash of several values: the same inputs give the same output everywhere.
    public static func mix(_ values: UInt64...) -> UInt64 {
        var hash: UInt64 = 0x243F_6A88_85A3_08D3
        for value in values {
            hash = finalize(hash ^ finalize(value &+ 0x9E37_79B9_7F4A_7C15))
        }
        return hash
    }

    /// A stable hash of a string (FNV-1a, then mixed), for seeding from names.
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return finalize(hash)
    }
}
