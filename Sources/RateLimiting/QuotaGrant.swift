import Foundation

/// A call the shared limiter granted.
public struct QuotaGrant: Sendable, Hashable {
    /// When it was granted, by the database server's clock (the one clock every host shares).
    public var grantedAt: Date
    /// The US-Pacific day it was counted in.
    public var day: PacificDay
    /// Calls of this (app, API) granted that day, this one included.
    public var usedToday: Int
    /// Of those, calls granted to backfills.
    public var usedBackfillToday: Int
}

/// The answer to one attempt at a call: granted, or how long to wait before asking again.
public struct QuotaAttempt: Sendable, Hashable {
    /// The grant, or `nil` when the limits do not allow a call yet.
    public var grant: QuotaGrant?
    /// When not granted: how long until the limits allow the next call (`.zero` when granted).
    public var wait: Duration
}

/// What a `PostgresQuotaGate` has done since it was created, for logs, `job_run` and benchmarks.
public struct QuotaGateStatistics: Sendable, Hashable {
    /// Attempts: `quota_acquire` round trips to the database, including failed ones.
    public var attempts = 0
    /// Wall time spent in those round trips.
    public var attemptTime = Duration.zero
    /// Calls granted.
    public var grants = 0
    /// Attempts answered "wait".
    public var waits = 0
    /// Time asked to wait in all (before jitter).
    public var waited = Duration.zero
    /// Round trips that failed on a lost or unreachable database and were tried again on a new connection.
    public var reconnects = 0

    /// Creates empty statistics.
    public init() {}

    /// The mean attempt round trip, or `nil` before the first.
    public var meanAttemptRoundTrip: Duration? {
        attempts == 0 ? nil : attemptTime / attempts
    }
}
