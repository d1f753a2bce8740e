/// One rolling-window limit: at most `count` calls in any `window`.
///
/// Every limit the stores publish has this shape: Google's "30 queries in any 30-second window", "3000 per
/// minute", Apple's "10 requests per second". The limiter enforces it over `window + margin`, so a call that
/// reaches the store a little later or earlier than we granted it (network latency differs from call to call)
/// still lands inside the store's own window count. See `QuotaBucket` for the proof.
public struct RateLimit: Sendable, Hashable, CustomStringConvertible {
    /// The most calls allowed in any window.
    public var count: Int
    /// The window the store counts in.
    public var window: Duration
    /// Extra length added to the window for latency between our grant and the store's arrival time.
    public var margin: Duration

    /// Creates a limit of `count` calls in any `window`.
    /// - Parameters:
    ///   - count: the most calls in any window; at least 1.
    ///   - window: the store's window; longer than zero.
    ///   - margin: the latency allowance; `nil` takes `defaultMargin(for:)`.
    public init(_ count: Int, per window: Duration, margin: Duration? = nil) {
        precondition(count >= 1, "a rate limit allows at least one call")
        precondition(window > .zero, "a rate limit's window is longer than zero")
        self.count = count
        self.window = window
        self.margin = margin ?? Self.defaultMargin(for: window)
    }

    /// A rate published as requests per second (Apple's form), which may be fractional.
    ///
    /// `rate` ≥ 1 becomes ⌊rate⌋ calls per ⌊rate⌋ / rate seconds; below 1, one call per 1 / rate seconds. Either
    /// way the average never exceeds `rate`. The default margin is 2.5 % of the window (25 ms on a second), half the
    /// general default: Apple publishes these rates per second but enforces them "on an hourly basis", so a call
    /// arriving a little early inside one second costs nothing there, and the margin only has to absorb the
    /// jitter of warm connections for a store (or simulator) that counts every second strictly. Over an hour the
    /// half margin is 2.4 % more calls.
    public static func perSecond(_ rate: Double, margin: Duration? = nil) -> RateLimit {
        precondition(rate > 0 && rate.isFinite, "a rate is positive")
        let count = max(1, Int(rate.rounded(.down)))
        let window = Duration.seconds(Double(count) / rate)
        return RateLimit(count, per: window, margin: margin ?? min(window / 40, .seconds(1)))
    }

    /// The default latency allowance: 5 % of the window, at most 250 ms.
    ///
    /// The store counts a call when its request arrives, storerecon when it grants it; what the margin must absorb
    /// is how much later one call's request arrives after its grant than another's, n calls on. On a warm
    /// connection that is the jitter of one network trip (milliseconds); a call that first opens its connection
    /// arrives later by the TCP and TLS 1.3 handshakes, two round trips: 250 ms covers them up to a 125 ms round
    /// trip, beyond any region to Google's and Apple's front ends (which answer from the nearest edge). The answer
    /// time does not count: a store that takes 1.5 s to answer counted the call when it arrived. The margin costs
    /// its share of every window under a backlog (0.8 % of Google's 30 s; the earlier 1 s cost 3.2 %, more than the
    /// slack the quota-use target leaves); `limits.<app>.quotaMarginMs` widens it for a far-away host or a store
    /// that throttles anyway. For short windows (Apple's per-second limits, which Apple enforces over the hour)
    /// 5 % keeps the rate close to the published one.
    public static func defaultMargin(for window: Duration) -> Duration {
        min(window / 20, maximumDefaultMargin)
    }

    /// The most the default margin adds to a window.
    public static let maximumDefaultMargin = Duration.milliseconds(250)

    /// This limit with the latency allowance `margin`, but never more than 5 % of the window (so a per-second
    /// window keeps at most 50 ms).
    public func withMargin(_ margin: Duration) -> RateLimit {
        RateLimit(count, per: window, margin: min(window / 20, max(.zero, margin)))
    }

    /// The window the limiter enforces: `window + margin`.
    public var enforcedWindow: Duration { window + margin }

    /// The most this limit grants per second under a backlog: `count / (window + margin)`.
    public var sustainedRate: Double { Double(count) / enforcedWindow.seconds }

    /// The same limit scaled to `factor` of its rate (Apple sandbox: 0.1).
    ///
    /// The count shrinks first; when it would drop below one call, the window grows instead. The result never
    /// allows more than `factor` of the original average rate.
    public func scaled(by factor: Double) -> RateLimit {
        precondition(factor > 0 && factor.isFinite, "a scale factor is positive")
        let scaledCount = Double(count) * factor
        if scaledCount >= 1 {
            return RateLimit(Int(scaledCount.rounded(.down)), per: window, margin: margin)
        }
        return RateLimit(1, per: window * (1 / scaledCount), margin: nil)
    }

    /// This limit as windows whose counts are at most `maximumCount`, so the grant log stays short.
    ///
    /// A limit of N in W (margin M) becomes ⌊N / k⌋ in W / k with k = ⌈N / maximumCount⌉, and a margin m of at
    /// least M / k. Any interval of length W + M ≤ k · (W / k + m) is covered by k intervals of the part's
    /// enforced length, each holding at most ⌊N / k⌋ grants, so at most N in all: the original bound still holds.
    /// The sustained rate stays close; only the burst allowance shrinks.
    public func split(maximumCount: Int) -> RateLimit {
        precondition(maximumCount >= 1, "a grant log holds at least one entry")
        guard count > maximumCount else { return self }
        let parts = (count + maximumCount - 1) / maximumCount
        let part = window / parts
        let partMargin = max(margin / parts, min(margin, Self.defaultMargin(for: part)))
        return RateLimit(count / parts, per: part, margin: partMargin)
    }

    /// `30/30s`, `3000/60s`, `10/1s`, `10/500ms`.
    public var description: String { "\(count)/\(window.compactDescription)" }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }

    /// `30s`, `500ms`, `1.5s`.
    var compactDescription: String {
        let value = seconds
        if value >= 1 {
            return value == value.rounded() ? "\(Int(value))s" : "\(value)s"
        }
        let milliseconds = value * 1000
        return milliseconds == milliseconds.rounded() ? "\(Int(milliseconds))ms" : "\(milliseconds)ms"
    }
}
