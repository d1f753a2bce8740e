import Foundation

/// Window arithmetic of the Google voided-purchases sync (pure; no I/O).
///
/// Google filters on the time a void was *recorded*, and only the last 30 days are available. Each run asks for
/// `[checkpoint − overlap, now − skew]`: the overlap catches voids recorded late near the previous window's end,
/// the skew keeps `endTime` safely behind Google's clock. A start older than 30 days is clamped (with a safety
/// margin) and the part that can no longer be fetched is a gap.
public struct VoidedWindowPlanner: Sendable {
    /// A planned window and the gap, if any, that could not be covered.
    public struct Plan: Sendable, Equatable {
        /// Start of the request window (inclusive).
        public var start: Date
        /// End of the request window; becomes the high-water mark when drained.
        public var end: Date
        /// `[from, to)` that is older than the store keeps, when the checkpoint was too old.
        public var gap: (from: Date, to: Date)?

        public static func == (lhs: Plan, rhs: Plan) -> Bool {
            lhs.start == rhs.start && lhs.end == rhs.end && lhs.gap?.from == rhs.gap?.from && lhs.gap?.to == rhs.gap?.to
        }
    }

    /// Google keeps 30 days.
    public static let retention: TimeInterval = 30 * 86_400
    /// Kept between the oldest time asked for and the retention limit, so a slow first page is not refused.
    public static let retentionMargin: TimeInterval = 10 * 60

    /// How far back each window starts before the checkpoint.
    public var overlap: TimeInterval
    /// How far behind now each window ends.
    public var skew: TimeInterval

    /// Creates a planner.
    public init(overlap: TimeInterval, skew: TimeInterval) {
        self.overlap = overlap
        self.skew = skew
    }

    /// The oldest start time that may be asked for at `now`.
    public static func oldestStart(now: Date) -> Date {
        now.addingTimeInterval(-(retention - retentionMargin))
    }

    /// Plans the incremental window.
    /// - Parameters:
    ///   - highWater: the end of the last fully drained window, or `nil` on the first run (which takes all 30 days).
    ///   - now: the current time.
    public func incremental(highWater: Date?, now: Date) -> Plan {
        let end = now.addingTimeInterval(-skew)
        let oldest = Self.oldestStart(now: now)
        guard let highWater else { return Plan(start: oldest, end: end, gap: nil) }
        let wanted = highWater.addingTimeInterval(-overlap)
        if wanted < oldest {
            // Only the part before the checkpoint that is beyond retention is lost; the overlap is a nicety.
            let gap = highWater < oldest ? (from: highWater, to: oldest) : nil
            return Plan(start: oldest, end: max(end, oldest), gap: gap)
        }
        return Plan(start: min(wanted, end), end: end, gap: nil)
    }

    /// Plans a backfill window `[since, until ?? now − skew]`, clamped to the retention.
    public func backfill(since: Date, until: Date?, now: Date) -> Plan {
        let latest = now.addingTimeInterval(-skew)
        let end = min(until ?? latest, latest)
        let oldest = Self.oldestStart(now: now)
        if since < oldest {
            return Plan(start: oldest, end: max(end, oldest), gap: (from: since, to: oldest))
        }
        return Plan(start: since, end: max(end, since), gap: nil)
    }
}
