/// How often and how long a failed call is retried: exponential backoff with full jitter, bounded in attempts and
/// in total time. Each retry passes the quota gate again.
public struct PlayRetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (1 means no retry).
    public var maxAttempts: Int
    /// Seconds from the first attempt after which no retry starts.
    public var budget: Double
    /// The backoff ceiling before the first retry, in seconds; it doubles per retry.
    public var initialBackoff: Double
    /// The largest backoff ceiling, in seconds.
    public var maxBackoff: Double
    /// Whether throttled answers (429, 403 `rateLimitExceeded`, not "per day") are retried. The quota gate has been
    /// told, so the retry waits for its next token.
    public var retriesThrottled: Bool

    /// Creates a policy.
    public init(
        maxAttempts: Int = 5, budget: Double = 120, initialBackoff: Double = 1, maxBackoff: Double = 30,
        retriesThrottled: Bool = true
    ) {
        self.maxAttempts = maxAttempts
        self.budget = budget
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.retriesThrottled = retriesThrottled
    }

    /// No retries.
    public static let none = PlayRetryPolicy(maxAttempts: 1, budget: 0)

    /// The wait before retry number `attempt` (1 after the first failure): a uniformly random time up to
    /// `min(maxBackoff, initialBackoff · 2^(attempt-1))`, but never less than the store's `Retry-After`.
    func delay(afterAttempt attempt: Int, retryAfter: Double?, random: (Double) -> Double) -> Double {
        let exponent = Double(min(max(attempt - 1, 0), 30))
        let ceiling = min(maxBackoff, initialBackoff * Double(1 << Int(exponent)))
        let jitter = min(max(random(ceiling), 0), ceiling)
        return max(jitter, retryAfter ?? 0)
    }

    /// Whether another attempt may start after `attempt` attempts, `elapsed` seconds since the first, and a wait of
    /// `delay` seconds.
    func allowsRetry(afterAttempt attempt: Int, elapsed: Double, delay: Double) -> Bool {
        attempt < maxAttempts && elapsed + delay <= budget
    }
}
