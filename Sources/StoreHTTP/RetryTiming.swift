/// The clock, sleep and random source a ``RetryPolicy`` uses, injected so tests neither sleep nor depend on chance.
public struct RetryTiming: Sendable {
    /// Monotonic seconds (any origin).
    public var now: @Sendable () -> Double
    /// Waits this many seconds; throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Double) async throws -> Void
    /// A number drawn uniformly from the range.
    public var random: @Sendable (ClosedRange<Double>) -> Double

    /// Creates a timing source.
    public init(
        now: @escaping @Sendable () -> Double,
        sleep: @escaping @Sendable (Double) async throws -> Void,
        random: @escaping @Sendable (ClosedRange<Double>) -> Double
    ) {
        self.now = now
        self.sleep = sleep
        self.random = random
    }

    /// The continuous clock, `Task.sleep` and the system random source.
    public static var live: RetryTiming {
        let clock = ContinuousClock()
        let origin = clock.now
        return RetryTiming(
            now: {
                let elapsed = clock.now - origin
                return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            },
            sleep: { seconds in
                guard seconds > 0 else { return }
                try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
            },
            random: { range in Double.random(in: range) }
        )
    }
}
