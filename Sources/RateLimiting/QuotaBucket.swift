/// The rate limiter of one (app, API): a sliding log of the most recent grant times, checked against every
/// window of a `QuotaLimit`, plus a block set by the store's throttling.
///
/// A classic token bucket of capacity n refilling n per w admits up to 2n calls in some window of length w (a
/// full bucket spent at once, then n more as it refills). The stores count "n in any w", so this bucket keeps
/// the times of the last n grants instead and decides exactly.
///
/// **Rule.** For each window, n calls in w′ = `window + margin`: a call at time t is granted only when the log holds
/// fewer than n grants, or the n-th most recent grant g satisfies g + w′ ≤ t; and t is not before `blockedUntil`.
/// Otherwise the wait is the largest (g + w′ − t) over the windows.
///
/// **Bound.** Take any n + 1 successive grants g₀ ≤ … ≤ gₙ. When gₙ was granted, g₀ was the n-th most recent
/// grant, so the rule demanded g₀ + w′ ≤ gₙ. Hence any n + 1 grants span at least w′, and every interval shorter
/// than w′ (in particular every half-open [s, s + w′)) holds at most n. The store sees each call after a latency
/// that varies from call to call; while that variation stays below the margin, the spans it sees exceed
/// w′ − margin = w, so every window of the store's own length w, open or closed, holds at most n.
///
/// **Full rate.** Under a backlog (a caller asks again as soon as told), grant k comes exactly at
/// gₖ₋ₙ + w′: n grants in every w′, the most the rule allows, so the sustained rate is n / (w + margin).
///
/// Only the last max(n) grants are ever consulted, so the log keeps that many. The bucket is a value: the
/// `LocalQuotaGate` keeps one per (app, API), and `PostgresQuotaGate` runs the same rule in SQL on the database
/// clock, for k calls at one instant (`quota_acquire_batch` in `sql/0025_quota_acquire_batch.sql`: at most n − k
/// grants already in each window; see `docs/quota-gate.md`).
public struct QuotaBucket<C: Clock>: Sendable where C.Duration == Duration {
    /// The windows enforced, as given.
    public let windows: [RateLimit]
    /// The most recent grant times, oldest first; at most `logLength`.
    public private(set) var grants: [C.Instant] = []
    /// No grant before this instant (a store's `Retry-After`, or a backoff).
    public private(set) var blockedUntil: C.Instant?
    /// How many grant times the log keeps: the largest window count.
    public let logLength: Int

    /// Creates an empty bucket enforcing `windows` exactly as given.
    public init(windows: [RateLimit]) {
        self.windows = windows
        self.logLength = windows.map(\.count).max() ?? 0
    }

    /// Creates an empty bucket for `limit`'s enforced windows (split and deduplicated; see
    /// `QuotaLimit.enforcedWindows`).
    public init(limit: QuotaLimit) {
        self.init(windows: limit.enforcedWindows)
    }

    /// The earliest instant, not before `now`, at which the rule allows the next call.
    public func earliestGrant(notBefore now: C.Instant) -> C.Instant {
        var earliest = now
        if let blockedUntil, blockedUntil > earliest { earliest = blockedUntil }
        for window in windows where grants.count >= window.count {
            let opens = grants[grants.count - window.count].advanced(by: window.enforcedWindow)
            if opens > earliest { earliest = opens }
        }
        return earliest
    }

    /// How long a call asked for at `now` must wait; `.zero` when it may go now.
    public func wait(at now: C.Instant) -> Duration {
        now.duration(to: earliestGrant(notBefore: now))
    }

    /// Grants a call at `now` when the rule allows it.
    /// - Returns: `.zero` when the call was granted and recorded; otherwise how long to wait before asking again
    ///   (nothing is recorded).
    public mutating func take(at now: C.Instant) -> Duration {
        let wait = wait(at: now)
        guard wait <= .zero else { return wait }
        // Instants from one Clock never go backwards; should a caller mix sources, keep the log in order.
        let granted = grants.last.map { max($0, now) } ?? now
        grants.append(granted)
        if grants.count > logLength { grants.removeFirst(grants.count - logLength) }
        return .zero
    }

    /// Blocks every call until `instant` (never shortening an existing block).
    public mutating func block(until instant: C.Instant) {
        if let blockedUntil, blockedUntil >= instant { return }
        blockedUntil = instant
    }
}
