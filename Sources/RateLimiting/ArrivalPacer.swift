/// Spaces one process's calls of one (app, API) by when their answers came back, not only by when they were
/// granted.
///
/// The shared log counts a call when the database grants it; the store counts it when the request arrives, which on
/// a loaded host can be later than the grant by more than any margin (the sender or the store's own handler waited
/// for a core). A call's arrival is never later than its answer, so if a call is asked for only after the answer of
/// the call `count` before it (in this process) came back, plus the window, the two arrive at least a window apart
/// at the store, whatever the transit took: no window of the store's holds more than `count` of this process's
/// calls. So the window is not widened by its latency margin here (which a grant needs, not an answer), only by
/// ``clockAllowance``. A call still in flight counts as arriving at any moment. The shared log still bounds all
/// processes together, margin included; this only closes the gap between a grant and an arrival within one process.
public struct ArrivalPacer<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The store's windows.
    public let windows: [RateLimit]
    /// What each window is widened by, as a fraction of it (1/200: 5 ms on a second): this host's clock and the
    /// store's may tick at rates a little apart (NTP slews a clock by at most 0.05 %).
    public static var clockAllowance: Int { 200 }
    /// Calls asked for whose answer has not come back.
    public private(set) var inFlight = 0
    /// When the latest answers came back, oldest first (at most the largest window's count).
    private var answered: [Instant] = []
    private let kept: Int

    /// Creates a pacer for the windows of one (app, API).
    public init(windows: [RateLimit]) {
        self.windows = windows
        kept = windows.map(\.count).max() ?? 0
    }

    /// What a call asked for at `now` has to wait for.
    public enum Wait: Sendable, Equatable {
        /// Nothing: the call may be asked for now.
        case none
        /// Until this instant.
        case until(Instant)
        /// Until a call in flight comes back (a window's count of calls is in flight).
        case answer
    }

    /// What a new call has to wait for at `now`.
    public func wait(at now: Instant) -> Wait {
        var latest: Instant?
        for window in windows {
            let earlier = window.count - inFlight
            if earlier <= 0 { return .answer }
            guard answered.count >= earlier else { continue }
            let free = answered[answered.count - earlier].advanced(
                by: window.window + window.window / Self.clockAllowance)
            if free > now, latest.map({ free > $0 }) ?? true { latest = free }
        }
        return latest.map { .until($0) } ?? .none
    }

    /// Counts a call as sent (in flight until ``finished(at:)``).
    public mutating func started() {
        inFlight += 1
    }

    /// Counts a call's answer (or its failure) as come back at `now`.
    public mutating func finished(at now: Instant) {
        inFlight = max(0, inFlight - 1)
        guard kept > 0 else { return }
        // Answers come back in almost the order they were sent; insertion keeps the list sorted either way.
        var index = answered.endIndex
        while index > answered.startIndex, answered[index - 1] > now { index -= 1 }
        answered.insert(now, at: index)
        if answered.count > kept { answered.removeFirst(answered.count - kept) }
    }
}
