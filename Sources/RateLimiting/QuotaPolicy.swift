/// How a quota gate limits calls: the limits of each app, the share of a day a backfill may take, and how it
/// backs off when a store throttles.
///
/// Every process that shares a database must use the same policy: the shared log keeps as many grants as the
/// policy's largest window needs, and the daily cap is checked against the caller's own policy.
public struct QuotaPolicy: Sendable {
    /// Limits for apps not listed in `appLimits`.
    public var defaultLimits: QuotaLimits
    /// Limits per app id (the lead maps configuration overrides and the Apple environment to these).
    public var appLimits: [String: QuotaLimits]
    /// The share of a daily cap a `.backfill` call may take (0...1); `.incremental` calls may use the whole cap,
    /// so at least `1 - backfillShare` of it is always left for them.
    public var backfillShare: Double
    /// The backoff when a store throttles without saying how long to wait.
    public var throttleBackoff: Backoff
    /// Throttles further apart than this start the backoff again from its base.
    public var throttleStreakReset: Duration
    /// The largest random delay added to a wait, so processes woken for the same slot do not all ask at once.
    public var maximumWaitJitter: Duration
    /// How many of an API's longest window a store's throttling answer may block it at most (see
    /// ``longestThrottleBlock(app:api:)``).
    public var throttleBlockWindows: Int

    /// Creates a policy.
    /// - Parameters:
    ///   - defaultLimits: limits for apps without their own entry; the stores' published limits by default.
    ///   - appLimits: limits per app id.
    ///   - backfillShare: the share of a daily cap a backfill may take, clamped to 0...1.
    ///   - throttleBackoff: the backoff after a throttle without `Retry-After`.
    ///   - throttleStreakReset: how long after a throttle the next one still counts as "in a row".
    ///   - maximumWaitJitter: the largest random delay added to a wait.
    public init(
        defaultLimits: QuotaLimits = .published,
        appLimits: [String: QuotaLimits] = [:],
        backfillShare: Double = 0.5,
        throttleBackoff: Backoff = Backoff(base: .seconds(1), maximum: .seconds(120)),
        throttleStreakReset: Duration = .seconds(600),
        maximumWaitJitter: Duration = .milliseconds(20),
        throttleBlockWindows: Int = 3
    ) {
        self.defaultLimits = defaultLimits
        self.appLimits = appLimits
        self.backfillShare = min(max(backfillShare, 0), 1)
        self.throttleBackoff = throttleBackoff
        self.throttleStreakReset = throttleStreakReset
        self.maximumWaitJitter = maximumWaitJitter
        self.throttleBlockWindows = max(1, throttleBlockWindows)
    }

    /// The limits of `app`.
    public func limits(for app: String) -> QuotaLimits {
        appLimits[app] ?? defaultLimits
    }

    /// The limit of `api` for `app`, or `nil` when it has none.
    public func limit(app: String, api: StoreAPI) -> QuotaLimit? {
        limits(for: app)[api]
    }

    /// The longest a store's throttling answer may block `api` of `app`: `throttleBlockWindows` of its longest
    /// enforced window, or the throttle backoff's maximum when that is longer (an API with short windows, such as
    /// Apple's per-second ones, still gets the backoff's room). Google voided purchases: 3 × 60.25 s = 180.75 s;
    /// Apple: 2 minutes.
    public func longestThrottleBlock(app: String, api: StoreAPI) -> Duration {
        let longestWindow = limit(app: app, api: api)?.windows.map(\.enforcedWindow).max() ?? .zero
        return max(throttleBackoff.maximum, longestWindow * throttleBlockWindows)
    }

    /// The block a throttling answer sets (see ``ThrottleBlock``).
    public func throttleBlock(
        app: String, api: StoreAPI, retryAfter: Double?, streak: Int, fraction: Double
    ) -> ThrottleBlock {
        ThrottleBlock(
            retryAfter: retryAfter, streak: streak, fraction: fraction,
            longest: longestThrottleBlock(app: app, api: api), backoff: throttleBackoff)
    }

    /// The calls a backfill may take of `limit`'s daily cap.
    public func backfillCap(of limit: QuotaLimit?) -> Int? {
        limit?.backfillCap(share: backfillShare)
    }

    /// A wait with a random delay added: up to a fifth of the wait, at most `maximumWaitJitter`.
    public func jittered(_ wait: Duration, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceiling = min(wait / 5, maximumWaitJitter)
        guard ceiling > .zero else { return wait }
        return wait + ceiling * Double.random(in: 0...1, using: &generator)
    }
}
