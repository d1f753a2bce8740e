import Foundation
import Logging
import Postgres

/// The `QuotaGate` every process shares through PostgreSQL: one budget per (app, API) for any number of
/// processes on any number of hosts.
///
/// Each attempt is one round trip, `SELECT * FROM quota_acquire(...)` (see `sql/0001_init.sql`): it locks the
/// `quota_bucket` row of the (app, API), applies `QuotaBucket`'s sliding-log rule and `DailyBudget`'s rules on
/// the database server's clock, and either records the grant or answers how long to wait. The caller then
/// sleeps that long on `clock`, plus a little jitter so waiting processes do not all ask at the same instant, and
/// asks again. Rows are always locked bucket first, then day, and each lock lasts one short statement: callers
/// queue, they cannot deadlock.
///
/// The actor owns its own connection and opens a new one when it is lost. libpq calls block, so the actor runs on a
/// thread of its own (``DatabaseThread``), never on Swift's shared pool.
/// A grant whose answer was lost with the connection is counted but unused: the limits err on the safe side.
public actor PostgresQuotaGate<C: Clock>: QuotaGate where C.Duration == Duration {
    struct Key: Hashable {
        var app: String
        var api: StoreAPI
    }

    let conninfo: String
    let policy: QuotaPolicy
    let clock: C
    let logger: Logger
    /// Attempts at a round trip before a lost database is reported to the caller.
    let connectionAttempts = 3
    /// How many times a call's grant that arrived too late is taken again before it is used anyway.
    static var mostRetakes: Int { 2 }
    var connection: PostgresConnection?
    var generator = SystemRandomNumberGenerator()
    /// Blocks and spent days this process learnt but could not write (the database was away), so it at least
    /// obeys them itself.
    var localBlocks: [Key: C.Instant] = [:]
    var localExhausted: [Key: PacificDay] = [:]
    /// This process's calls paced by their answers, per (app, API) (see ``ArrivalPacer``).
    var pacers: [Key: ArrivalPacer<C.Instant>] = [:]

    /// What this gate has done so far.
    public internal(set) var statistics = QuotaGateStatistics()
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
    public func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
        try await grant(app: app, api: api, purpose: purpose).leaveBy
    }

    /// Waits until one call is allowed, counts it, and returns the grant with its database time.
    /// - Throws: as `acquire(app:api:purpose:)`.
    public func acquireGrant(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> QuotaGrant {
        try await grant(app: app, api: api, purpose: purpose).grant
    }

    private func grant(
        app: String, api: StoreAPI, purpose: CallPurpose
    ) async throws -> (grant: QuotaGrant, leaveBy: ContinuousClock.Instant?) {
        // The log counts a call when the database grants it, the store when the request arrives: a grant that took
        // longer than the tightest margin to reach this process (a loaded host stalled it) would arrive late enough
        // to meet the next window's calls. Such a grant is left counted, unused, and taken again, a few times at
        // most so that a host slower than every margin still makes progress. The margins are the store's windows'
        // (a window split to fit the log has a proportionally smaller one, which no arrival time is judged by).
        let margin = api.countsShortWindows ? policy.limit(app: app, api: api)?.windows.map(\.margin).min() : nil
        var retakes = 0
        while true {
            try Task.checkCancellation()
            if let blocked = localBlocks[Key(app: app, api: api)], blocked > clock.now {
                try await clock.sleep(until: blocked, tolerance: nil)
                continue
            }
            let asked = ContinuousClock.now
            let attempt = try await attempt(app: app, api: api, purpose: purpose)
            if let grant = attempt.grant {
                guard let margin, retakes < Self.mostRetakes else { return (grant, nil) }
                if asked.duration(to: .now) > margin {
                    retakes += 1
                    statistics.retaken += 1
                    continue
                }
                return (grant, asked + margin)
            }
            let wait = policy.jittered(attempt.wait, using: &generator)
            try await clock.sleep(until: clock.now.advanced(by: wait), tolerance: nil)
        }
    }

    /// One attempt, one round trip: grants the call if every limit allows it now, or says how long to wait.
    /// Never sleeps (except between reconnection attempts).
    /// - Throws: `QuotaError` when the day's budget for `purpose` is spent; `PostgresError` when the database
    ///   stays unreachable.
    public func attempt(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> QuotaAttempt {
        let key = Key(app: app, api: api)
        let limit = policy.limit(app: app, api: api)
        let windows = limit?.enforcedWindows ?? []
        let backfillCap = policy.backfillCap(of: limit)
        if let day = localExhausted[key], day == PacificDay(containing: Date()) {
            throw QuotaError(
                app: app, api: api,
                reason: QuotaRefusal.storeExhausted.reason(day: day, cap: limit?.dailyCap, backfillCap: backfillCap))
        }
        let counts = windows.map { String($0.count) }
        // Rounded up to PostgreSQL's microsecond, so the database never enforces a shorter window.
        let lengths = windows.map { String(format: "%.6f", ($0.enforcedWindow.seconds * 1e6).rounded(.up) / 1e6) }
        let parameters: [any PostgresEncodable] = [
            app, api.rawValue, purpose == .backfill, Self.arrayLiteral(counts), Self.arrayLiteral(lengths),
            limit?.dailyCap, backfillCap,
        ]
        let measure = ContinuousClock()
        let row = try await withConnection { connection in
            let started = measure.now
            defer {
                statistics.attempts += 1
                statistics.attemptTime += started.duration(to: measure.now)
            }
            let rows = try connection.query(Self.acquireSQL, parameters)
            return try AttemptRow(rows[0])
        }
        if let refusal = row.refusal {
            throw QuotaError(
                app: app, api: api,
                reason: (QuotaRefusal(rawValue: refusal) ?? .capReached).reason(
                    day: row.day, cap: limit?.dailyCap, backfillCap: backfillCap))
        }
        if let grantedAt = row.grantedAt {
            statistics.grants += 1
            let grant = QuotaGrant(
                grantedAt: grantedAt, day: row.day, usedToday: row.used, usedBackfillToday: row.usedBackfill)
            return QuotaAttempt(grant: grant, wait: .zero)
        }
        let wait = Duration.seconds(max(0, row.waitSeconds ?? 0))
        statistics.waits += 1
        statistics.waited += wait
        return QuotaAttempt(grant: nil, wait: wait)
    }

    /// Closes the connection; the next call opens a new one.
    public func close() {
        connection?.close()
        connection = nil
    }

    /// `{1,2,3}`: a PostgreSQL array literal of numbers.
    static func arrayLiteral(_ numbers: [String]) -> String {
        "{" + numbers.joined(separator: ",") + "}"
    }

    static var acquireSQL: String {
        "SELECT granted_at, wait_seconds, refusal, grant_day, day_used, day_used_backfill "
            + "FROM quota_acquire($1, $2, $3, $4::integer[], $5::double precision[], $6, $7)"
    }
}

extension PostgresQuotaGate where C == ContinuousClock {
    /// Creates a gate that sleeps on the real `ContinuousClock`.
    public init(conninfo: String, policy: QuotaPolicy = QuotaPolicy(), logger: Logger? = nil) {
        self.init(conninfo: conninfo, policy: policy, clock: ContinuousClock(), logger: logger)
    }
}

/// One row of `quota_acquire`.
struct AttemptRow {
    var grantedAt: Date?
    var waitSeconds: Double?
    var refusal: String?
    var day: PacificDay
    var used: Int
    var usedBackfill: Int

    init(_ row: PostgresRow) throws {
        grantedAt = try row.decodeIfPresent("granted_at")
        waitSeconds = try row.decodeIfPresent("wait_seconds")
        refusal = try row.decodeIfPresent("refusal")
        let dayText: String = try row.decode("grant_day")
        guard let day = PacificDay(isoDate: dayText) else {
            throw PostgresError(
                code: .decoding, operation: "decode", message: "not a date", column: "grant_day")
        }
        self.day = day
        used = try row.decode("day_used")
        usedBackfill = try row.decode("day_used_backfill")
    }
}
