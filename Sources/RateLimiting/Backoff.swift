/// Exponential backoff with "full jitter": the n-th wait is a random duration between a floor and
/// min(maximum, base · 2ⁿ⁻¹).
///
/// Used when a store throttles a call without a `Retry-After`. Unlike a client's own retry policy, the wait it
/// gives blocks the (app, API) for every process, so it has a floor (`base`): a wait close to zero would not
/// let the store's window move at all.
public struct Backoff: Sendable, Hashable {
    /// The first ceiling, and the shortest wait.
    public var base: Duration
    /// The largest ceiling.
    public var maximum: Duration

    /// Creates a backoff.
    public init(base: Duration, maximum: Duration) {
        precondition(base > .zero && maximum >= base, "a backoff grows from a positive base up to its maximum")
        self.base = base
        self.maximum = maximum
    }

    /// The ceiling of the `attempt`-th wait (1-based): min(maximum, base · 2^(attempt − 1)).
    public func ceiling(attempt: Int) -> Duration {
        let doublings = min(max(attempt, 1) - 1, 62)
        var ceiling = base
        for _ in 0..<doublings {
            ceiling *= 2
            if ceiling >= maximum { return maximum }
        }
        return min(ceiling, maximum)
    }

    /// The `attempt`-th wait (1-based): uniform in `base ... ceiling(attempt)`.
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        delay(attempt: attempt, fraction: Double.random(in: 0...1, using: &generator))
    }

    /// The `attempt`-th wait at `fraction` (0...1) of the way from `base` to `ceiling(attempt)`.
    public func delay(attempt: Int, fraction: Double) -> Duration {
        let ceiling = ceiling(attempt: attempt)
        return base + (ceiling - base) * min(max(fraction, 0), 1)
    }
}
