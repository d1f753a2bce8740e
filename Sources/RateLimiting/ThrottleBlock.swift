/// How long a store's throttling answer blocks an (app, API) for every process, and why: the store's `Retry-After`
/// or a growing backoff, never longer than ``QuotaPolicy/longestThrottleBlock(app:api:)``.
///
/// A `Retry-After` can be wrong (a proxy, a bug, Apple's millisecond form set to the year 2100): a window's
/// throttling never justifies more than a few windows' wait, so a longer one is capped and the reason says so.
public struct ThrottleBlock: Sendable, Equatable {
    /// How long the API is blocked from now.
    public var duration: Duration
    /// Why, for `status` and the log: what the store asked and what was kept of it.
    public var reason: String

    /// Decides the block for one throttling answer.
    /// - Parameters:
    ///   - retryAfter: the store's `Retry-After`, as seconds from now, when it sent one.
    ///   - streak: throttles in a row, this one included (the backoff's exponent when there is no `Retry-After`).
    ///   - fraction: where in the backoff's range the wait falls (0...1; random in production).
    ///   - longest: the cap (``QuotaPolicy/longestThrottleBlock(app:api:)``).
    ///   - backoff: the backoff used without a `Retry-After`.
    public init(retryAfter: Double?, streak: Int, fraction: Double, longest: Duration, backoff: Backoff) {
        guard let retryAfter else {
            duration = min(backoff.delay(attempt: streak, fraction: fraction), longest)
            reason =
                "throttled without Retry-After: backoff \(duration.compactDescription) (throttle \(streak) in a row)"
            return
        }
        let asked = retryAfter.isNaN ? 0 : max(0, retryAfter)
        if asked < backoff.base.seconds {
            // "Now", or a time already past by this host's clock (Apple's form is an absolute time): a block of
            // nothing would let every process throttle again at once, so the backoff's floor holds.
            duration = min(backoff.base, longest)
            reason =
                "throttled: Retry-After \(Self.describe(seconds: asked)), kept at least \(duration.compactDescription)"
        } else if asked <= longest.seconds {
            duration = .seconds(asked)
            reason = "throttled: Retry-After \(Self.describe(seconds: asked))"
        } else {
            duration = longest
            reason =
                "throttled: Retry-After asked \(Self.describe(seconds: asked)), capped at "
                + "\(longest.compactDescription) (a few of the API's windows)"
        }
    }

    /// `90s`, `3 h`, `12 days`, `3.2 years`.
    static func describe(seconds: Double) -> String {
        guard seconds.isFinite else { return "forever" }
        if seconds < 3600 { return Duration.seconds((seconds * 1000).rounded() / 1000).compactDescription }
        if seconds < 2 * 86_400 { return "\(Int((seconds / 3600).rounded())) h" }
        if seconds < 365 * 86_400 { return "\(Int((seconds / 86_400).rounded())) days" }
        return String(format: "%.1f years", seconds / (365.25 * 86_400))
    }
}
