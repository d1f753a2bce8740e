import Foundation
import Logging
import Postgres

/// The `QuotaGate` every process shares through PostgreSQL: one budget per (app, API) for any number of
/// processes on any number of hosts.
///
/// Each round trip is `SELECT * FROM quota_acquire_batch(...)` (see `sql/0025_quota_acquire_batch.sql`): it locks
/// the `quota_bucket` row of the (app, API), applies `QuotaBucket`'s sliding-log rule and `DailyBudget`'s rules on
/// the database server's clock, and grants as many of the calls asked for as every limit allows now, or answers how
/// long to wait. Calls of one (app, API, purpose) that wait in this process at once share one round trip: the first
/// leads, and every call arriving before the leader reaches the database thread joins its batch. A caller not
/// granted sleeps that long on `clock`, plus a little jitter so waiting processes do not all ask at the same instant,
/// and asks again. Rows are always locked bucket first, then day, and each lock lasts one short statement: callers
/// queue, they cannot deadlock.
///
/// The actor owns its own connection and opens a new one when it is lost. libpq calls block, so the actor runs on a
/// thread of its own (``DatabaseThread``), never on Swift's shared pool; only round trips run there; waits, pacing
/// and local blocks run on the caller's task, their state behind locks split by (app, API) (``QuotaGateShards``).
/// A grant whose answer was lost with the connection is counted but unused: the limits err on the safe side.
public actor PostgresQuotaGate<C: Clock>: QuotaGate where C.Duration == Duration {
    let conninfo: String
    let policy: QuotaPolicy
    let clock: C
    let logger: Logger
    /// Attempts at a round trip before a lost database is reported to the caller.
    let connectionAttempts = 3
    /// How many times a call's grant that arrived too late is taken again before it is used anyway.
    static var mostRetakes: Int { 2 }
    var connection: PostgresConnection?
    /// Pacing, local blocks, batches being gathered and statistics: no database work.
    nonisolated let local = QuotaGateShards<C.Instant>()

    /// What this gate has done so far (read without waiting for a round trip).
    public nonisolated var statistics: QuotaGateStatistics { local.statistics }
    private nonisolated let thread = DatabaseThread(label: "storerecon-quota-gate")

    /// The gate's executor: a thread of its own, which its statements block.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    /// Creates a gate. It connects on first use.
    /// - Parameters:
    ///   - conninfo: a libpq conninfo string or URI for the database holding `quota_bucket` and `quota_day`.
    ///   - policy: the limits; every process sharing the database must use the same.
    ///   - clock: the clock to sleep on while waiting (`ContinuousClock` in production).
    ///   - logger: where throttles, reconnects and failed reports are logged.
    public init(conninfo: String, policy: QuotaPolicy = QuotaPolicy(), clock: C, logger: Logger? = nil) {
        self.conninfo = conninfo
        self.policy = policy
        self.clock = clock
        self.logger = logger ?? Logger(label: "storerecon.quota")
    }

    /// Waits until one call of `api` for `app` is allowed, then counts it.
    /// - Returns: the latest moment the call may leave: the margin of the API's tightest window after the grant was
    ///   asked for (nil for APIs the store does not count in short windows, and for a grant already taken again as
    ///   often as allowed: a host slower than every margin must still make progress).
    /// - Throws: `QuotaError` when the day's budget for `purpose` is spent; `CancellationError` when cancelled;
    ///   `PostgresError` when the database stays unreachable.
    @discardableResult
    public nonisolated func acquire(
        app: String, api: StoreAPI, purpose: CallPurpose
    ) async throws -> ContinuousClock.Instant? {
        try await grant(app: app, api: api, purpose: purpose).leaveBy
    }

    /// Waits until one call is allowed, counts it, and returns the grant with its database time.
    /// - Throws: as `acquire(app:api:purpose:)`.
    public nonisolated func acquireGrant(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> QuotaGrant {
        try await grant(app: app, api: api, purpose: purpose).grant
    }

    private nonisolated func grant(
        app: String, api: StoreAPI, purpose: CallPurpose
    ) async throws -> (grant: QuotaGrant, leaveBy: ContinuousClock.Instant?) {
        // The log counts a call when the database grants it, the store when the request arrives: a grant that took
        // longer than the tightest margin to reach this process (a loaded host stalled it) would arrive late enough
        // to meet the next window's calls. Such a grant is left counted, unused, and taken again, a few times at
        // most so that a host slower than every margin still makes progress. The margins are the store's windows'
        // (a window split to fit the log has a proportionally smaller one, which no arrival time is judged by).
        // A batch's calls are judged from the moment its round trip was asked for.
        let margin = api.countsShortWindows ? policy.limit(app: app, api: api)?.windows.map(\.margin).min() : nil
        let key = BatchKey(app: app, api: api, purpose: purpose)
        var retakes = 0
        while true {
            try Task.checkCancellation()
            let (attempt, asked): (QuotaAttempt, ContinuousClock.Instant)
            switch try await batchedAttempt(key) {
            case .blocked(let until):
                try await clock.sleep(until: until, tolerance: nil)
                continue
            case .answered(let answer, let answerAsked):
                (attempt, asked) = (answer, answerAsked)
            }
            if let grant = attempt.grant {
                guard let margin, retakes < Self.mostRetakes else { return (grant, nil) }
                if asked.duration(to: .now) > margin {
                    retakes += 1
                    local[key].withLock { $0.statistics.retaken += 1 }
                    continue
                }
                return (grant, asked + margin)
            }
            // Jittered already, once for the batch.
            try await clock.sleep(until: clock.now.advanced(by: attempt.wait), tolerance: nil)
        }
    }

    /// One attempt, one round trip of its own: grants the call if every limit allows it now, or says how long to
    /// wait. Never sleeps (except between reconnection attempts).
    /// - Throws: `QuotaError` when the day's budget for `purpose` is spent; `PostgresError` when the database
    ///   stays unreachable.
    public func attempt(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> QuotaAttempt {
        let key = BatchKey(app: app, api: api, purpose: purpose)
        let row = try await roundTrip(
            key, wanted: 1, exhausted: local[key].withLock { $0.localExhausted[key.quotaKey] })
        return try row.attempts(wanted: 1, key: key, policy: policy)[0].get()
    }

    /// Closes the connection; the next call opens a new one.
    public func close() {
        connection?.close()
        connection = nil
    }
}

extension PostgresQuotaGate where C == ContinuousClock {
    /// Creates a gate that sleeps on the real `ContinuousClock`.
    public init(conninfo: String, policy: QuotaPolicy = QuotaPolicy(), logger: Logger? = nil) {
        self.init(conninfo: conninfo, policy: policy, clock: ContinuousClock(), logger: logger)
    }
}
