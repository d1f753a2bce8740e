import Foundation

/// The clock, sleep and randomness the client uses, injectable so tests drive time by hand and never sleep.
public struct PlayRuntime: Sendable {
    /// Wall-clock time (JWT `iat`, token expiry, retry budget).
    public var now: @Sendable () -> Date
    /// Waits the given number of seconds; throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Double) async throws -> Void
    /// A uniformly random number in `0 ... upperBound` (backoff jitter).
    public var random: @Sendable (Double) -> Double

    /// Creates a runtime.
    public init(
        now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Double) async throws -> Void,
        random: @escaping @Sendable (Double) -> Double
    ) {
        self.now = now
        self.sleep = sleep
        self.random = random
    }

    /// The system clock, `Task.sleep` and the system random generator.
    public static let live = PlayRuntime(
        now: { Date() },
        sleep: { seconds in try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up)))) },
        random: { upperBound in upperBound > 0 ? Double.random(in: 0...upperBound) : 0 }
    )
}
