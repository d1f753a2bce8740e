/// When and how long to wait before trying a failed store call again: exponential backoff with full jitter, a bounded
/// number of attempts and a bounded total time.
///
/// The wait before retry *n* (1 for the first retry) is drawn uniformly from `0 ... min(maxDelay, baseDelay × 2ⁿ⁻¹)`
/// ("full jitter", so many workers that failed together do not retry together). A server's `Retry-After` raises the
/// wait to at least what it asked for; one longer than `maxDelay` ends the retries instead, because the job is better
/// off stopping and resuming later than holding a worker that long.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first one included (1 means never retry).
    public var maxAttempts: Int
    /// The ceiling of the first retry's wait, in seconds; it doubles with each retry.
    public var baseDelay: Double
    /// The largest single wait, in seconds.
    public var maxDelay: Double
    /// No retry starts later than this many seconds after the first attempt started.
    public var maxTotalTime: Double

    /// Creates a policy.
    /// - Parameters:
    ///   - maxAttempts: attempts in all, the first one included (at least 1).
    ///   - baseDelay: the ceiling of the first retry's wait, in seconds.
    ///   - maxDelay: the largest single wait, in seconds.
    ///   - maxTotalTime: no retry starts later than this many seconds after the first attempt.
    public init(maxAttempts: Int = 4, baseDelay: Double = 0.5, maxDelay: Double = 30, maxTotalTime: Double = 120) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.maxTotalTime = max(0, maxTotalTime)
    }

    /// Never retry.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The upper bound of the jittered wait before retry number `retry` (1 for the first retry).
    public func delayCeiling(forRetry retry: Int) -> Double {
        let exponent = Double(max(0, retry - 1))
        // 2^64 already dwarfs any sensible maxDelay; capping the exponent keeps the product finite.
        return min(maxDelay, baseDelay * Double.pow2(min(exponent, 64)))
    }

    /// Decides whether to try again after a failed attempt, and how long to wait first.
    /// - Parameters:
    ///   - attempt: the attempt that just failed (1 for the first).
    ///   - elapsed: seconds since the first attempt started.
    ///   - retryAfter: the server's `Retry-After`, as seconds from now, when it sent one.
    ///   - random: draws a number uniformly from the range (injected so tests are deterministic).
    /// - Returns: the wait in seconds, or `nil` when no further attempt should be made.
    public func delay(
        afterAttempt attempt: Int, elapsed: Double, retryAfter: Double? = nil,
        random: (ClosedRange<Double>) -> Double
    ) -> Double? {
        guard attempt < maxAttempts else { return nil }
        let ceiling = delayCeiling(forRetry: attempt)
        var wait = min(ceiling, max(0, random(0...ceiling)))
        if let retryAfter {
            guard retryAfter <= maxDelay else { return nil }
            wait = max(wait, retryAfter)
        }
        guard elapsed + wait <= maxTotalTime else { return nil }
        return wait
    }

    /// Runs `operation` until it succeeds, fails with an error that is not retryable, or the policy gives up; then
    /// rethrows the last error.
    /// - Parameters:
    ///   - timing: the clock, sleep and random source (``RetryTiming/live`` in production).
    ///   - isRetryable: whether an error may go away when the call is repeated.
    ///   - retryAfter: the server's requested wait carried by an error, in seconds from now, if any.
    ///   - operation: one attempt; receives the attempt number, starting at 1.
    /// - Throws: the last error of `operation`, or `CancellationError` when cancelled while waiting.
    public func run<T: Sendable>(
        timing: RetryTiming = .live,
        isRetryable: (any Error) -> Bool,
        retryAfter: (any Error) -> Double? = { _ in nil },
        _ operation: (_ attempt: Int) async throws -> T
    ) async throws -> T {
        let start = timing.now()
        var attempt = 1
        while true {
            do {
                return try await operation(attempt)
            } catch {
                guard isRetryable(error), !(error is CancellationError),
                    let wait = delay(
                        afterAttempt: attempt, elapsed: timing.now() - start, retryAfter: retryAfter(error),
                        random: timing.random)
                else { throw error }
                try Task.checkCancellation()
                try await timing.sleep(wait)
                attempt += 1
            }
        }
    }
}

extension Double {
    fileprivate static func pow2(_ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 {
            result *= 2
            remaining -= 1
        }
        return result
    }
}
