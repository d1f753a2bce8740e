/// Everything that limits one store API for one app: rolling windows that must all hold, and an optional cap
/// per US-Pacific day.
///
/// Google voided purchases, for example, is `[30/30s, 3000/60s]` plus 6000 per day: each call must fit every
/// window and the day.
public struct QuotaLimit: Sendable, Hashable, CustomStringConvertible {
    /// The windows; every one must allow a call before it is granted.
    public var windows: [RateLimit]
    /// Calls per US-Pacific day, or `nil` for no daily cap.
    public var dailyCap: Int?

    /// The most grants the shared log keeps per (app, API); longer windows are split to fit (see
    /// `RateLimit.split(maximumCount:)`).
    public static let maximumLogLength = 200

    /// Creates a limit.
    public init(windows: [RateLimit], dailyCap: Int? = nil) {
        precondition(dailyCap.map { $0 >= 0 } ?? true, "a daily cap is not negative")
        self.windows = windows
        self.dailyCap = dailyCap
    }

    /// The same limit at `factor` of its rates and daily cap (Apple sandbox: 0.1). A cap never drops below 1.
    public func scaled(by factor: Double) -> QuotaLimit {
        QuotaLimit(
            windows: windows.map { $0.scaled(by: factor) },
            dailyCap: dailyCap.map { max(1, Int((Double($0) * factor).rounded(.down))) })
    }

    /// The windows the limiter enforces: any window that another already implies dropped, the rest split to fit
    /// the log.
    ///
    /// Window B (n₂ in w₂) is implied by window A (n₁ in w₁) when n₁ · ⌈w₂ / w₁⌉ ≤ n₂: an interval of length w₂
    /// is covered by ⌈w₂ / w₁⌉ intervals of length w₁, each holding at most n₁ grants. Google's 3000/min is
    /// implied by 30/30s (at most 60 a minute), so the log need not hold 3000 entries.
    public var enforcedWindows: [RateLimit] {
        let needed = Self.withoutImplied(windows)
        return Self.withoutImplied(needed.map { $0.split(maximumCount: Self.maximumLogLength) })
    }

    static func withoutImplied(_ windows: [RateLimit]) -> [RateLimit] {
        var kept: [RateLimit] = []
        for (index, candidate) in windows.enumerated() {
            let implied = windows.enumerated().contains { otherIndex, other in
                guard otherIndex != index, Self.implies(other, candidate) else { return false }
                // Two windows that imply each other are the same constraint: keep the first.
                return !Self.implies(candidate, other) || otherIndex < index
            }
            if !implied { kept.append(candidate) }
        }
        return kept
    }

    /// The length of the grant log these windows need: the largest enforced count.
    public var logLength: Int { enforcedWindows.map(\.count).max() ?? 0 }

    /// The calls a backfill may take of the daily cap, given its share (0...1).
    public func backfillCap(share: Double) -> Int? {
        dailyCap.map { Int((Double($0) * min(max(share, 0), 1)).rounded(.down)) }
    }

    /// `30/30s + 3000/60s, 6000/day`.
    public var description: String {
        let windowText = windows.isEmpty ? "no window" : windows.map(\.description).joined(separator: " + ")
        return dailyCap.map { "\(windowText), \($0)/day" } ?? windowText
    }

    /// Whether every schedule that keeps `first` also keeps `second`, measured on the enforced windows.
    static func implies(_ first: RateLimit, _ second: RateLimit) -> Bool {
        first.count * ceilingRatio(second.enforcedWindow, first.enforcedWindow) <= second.count
    }

    /// ⌈a / b⌉ for positive durations.
    static func ceilingRatio(_ numerator: Duration, _ denominator: Duration) -> Int {
        let ratio = numerator / denominator
        let whole = Int(ratio.rounded(.down))
        return denominator * whole >= numerator ? whole : whole + 1
    }
}
