import Synchronization

/// A clock that moves only when told: `advance(by:)`, or a `sleep`, which jumps straight to its deadline. Tests
/// drive it from one task at a time, so "sleeping" costs no real time.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))
    private let sleeps = Mutex([Duration]())

    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// The durations slept so far, in order.
    var sleptDurations: [Duration] { sleeps.withLock { $0 } }

    func advance(by duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        current.withLock { now in
            sleeps.withLock { $0.append(now.duration(to: deadline)) }
            if deadline > now { now = deadline }
        }
    }
}
