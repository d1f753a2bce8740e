/// What a `PostgresQuotaGate` has done since it was created, for logs, `job_run` and benchmarks.
public struct QuotaGateStatistics: Sendable, Hashable {
    /// Attempts: `quota_acquire_batch` round trips to the database, including failed ones (one per batch).
    public var attempts = 0
    /// Wall time spent in those round trips.
    public var attemptTime = Duration.zero
    /// Calls granted.
    public var grants = 0
    /// Calls that rode on another call's round trip (a batch of the same app, API and purpose).
    public var joined = 0
    /// The most calls asked for in one round trip.
    public var largestBatch = 0
    /// Attempts answered "wait".
    public var waits = 0
    /// Time asked to wait in all (before jitter).
    public var waited = Duration.zero
    /// Round trips that failed on a lost or unreachable database and were tried again on a new connection.
    public var reconnects = 0
    /// Grants that reached this process later than their window's latency margin (a loaded host) and were taken
    /// again rather than sent late.
    public var retaken = 0
    /// Times a call waited for this process's earlier calls' answers (``ArrivalPacer``) before it was asked for.
    public var paced = 0

    /// Creates empty statistics.
    public init() {}

    /// The mean attempt round trip, or `nil` before the first.
    public var meanAttemptRoundTrip: Duration? {
        attempts == 0 ? nil : attemptTime / attempts
    }
}

extension QuotaGateStatistics {
    /// Adds what another part of the same gate did: counts and times add up, the largest batch is the larger.
    mutating func add(_ other: QuotaGateStatistics) {
        attempts += other.attempts
        attemptTime += other.attemptTime
        grants += other.grants
        joined += other.joined
        largestBatch = max(largestBatch, other.largestBatch)
        waits += other.waits
        waited += other.waited
        reconnects += other.reconnects
        retaken += other.retaken
        paced += other.paced
    }

    /// Counts one round trip for `wanted` calls that took `took`.
    mutating func countAttempt(wanted: Int, took: Duration) {
        attempts += 1
        attemptTime += took
        largestBatch = max(largestBatch, wanted)
    }
}
