import Foundation

/// A `QuotaGate` for one process: the same rules as `PostgresQuotaGate` over in-memory `QuotaBucket`s and
/// `DailyBudget`s, on an injected clock.
///
/// For tests of the store clients and jobs (with a manual clock), and for runs that must not write to the
/// database. It does not share anything between processes.
public actor LocalQuotaGate<C: Clock>: QuotaGate where C.Duration == Duration {
    private struct Key: Hashable {
        var app: String
        var api: StoreAPI
    }

    private struct ThrottleStreak {
        var count: Int
        var last: C.Instant
    }

    private let clock: C
    private let policy: QuotaPolicy
    private let today: @Sendable () -> PacificDay
    private var buckets: [Key: QuotaBucket<C>] = [:]
    private var budgets: [Key: DailyBudget] = [:]
    private var streaks: [Key: ThrottleStreak] = [:]
    private var generator = SystemRandomNumberGenerator()

    /// Creates a gate.
    /// - Parameters:
    ///   - policy: the limits and shares.
    ///   - clock: the clock to measure windows on and to sleep on.
    ///   - today: the current US-Pacific day (the wall clock's by default).
    public init(
        policy: QuotaPolicy = QuotaPolicy(), clock: C,
        today: @escaping @Sendable () -> PacificDay = { PacificDay(containing: Date()) }
    ) {
        self.policy = policy
        self.clock = clock
        self.today = today
    }

    /// Waits until the call is allowed, then counts it.
    /// - Throws: `QuotaError` when the day's budget for `purpose` is spent; `CancellationError` when cancelled.
    @discardableResult
    public func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
        let key = Key(app: app, api: api)
        while true {
            try Task.checkCancellation()
            var budget = currentBudget(key)
            do {
                try budget.check(purpose: purpose, app: app, api: api)
            } catch {
                budgets[key] = budget
                throw error
            }
            var bucket = bucket(key)
            let wait = bucket.take(at: clock.now)
            buckets[key] = bucket
            if wait <= .zero {
                budget.record(purpose: purpose)
                budgets[key] = budget
                return nil
            }
            // Nothing is held across the sleep: the next round reads the state afresh.
            let jittered = policy.jittered(wait, using: &generator)
            try await clock.sleep(until: clock.now.advanced(by: jittered), tolerance: nil)
        }
    }

    /// Applies the store's answer: a throttle blocks the API (for `retryAfter`, or a growing backoff, at most
    /// `policy.longestThrottleBlock`); a "per day" answer stops it until the Pacific day turns.
    public func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        let key = Key(app: app, api: api)
        switch feedback {
        case .accepted:
            streaks[key] = nil
        case .throttled(let retryAfter):
            let now = clock.now
            var streak = streaks[key] ?? ThrottleStreak(count: 0, last: now)
            if streak.last.duration(to: now) > policy.throttleStreakReset { streak.count = 0 }
            streak.count += 1
            streak.last = now
            streaks[key] = streak
            let block = policy.throttleBlock(
                app: app, api: api, retryAfter: retryAfter, streak: streak.count,
                fraction: Double.random(in: 0...1, using: &generator))
            var bucket = bucket(key)
            bucket.block(until: now.advanced(by: block.duration))
            buckets[key] = bucket
            var budget = currentBudget(key)
            budget.recordThrottle()
            budgets[key] = budget
        case .dailyQuotaExhausted(let sentOn):
            // A call that left on a day already over spent that day, not today.
            if let sentOn, sentOn < today() { return }
            var budget = currentBudget(key)
            budget.markExhausted()
            budgets[key] = budget
        }
    }

    /// Today's use of every API of `app` that has a limit or was called.
    public func usageToday(app: String) -> [QuotaUsage] {
        let limited = policy.limits(for: app).apis.keys
        let called = budgets.keys.filter { $0.app == app }.map(\.api)
        return Set(limited).union(called).sorted { $0.rawValue < $1.rawValue }.map { api in
            currentBudget(Key(app: app, api: api)).usage(api: api)
        }
    }

    /// When the bucket of `api` next allows a call, measured from now (`.zero`: at once).
    public func wait(app: String, api: StoreAPI) -> Duration {
        buckets[Key(app: app, api: api)]?.wait(at: clock.now) ?? .zero
    }

    private func bucket(_ key: Key) -> QuotaBucket<C> {
        buckets[key] ?? QuotaBucket(limit: policy.limit(app: key.app, api: key.api) ?? QuotaLimit(windows: []))
    }

    private func currentBudget(_ key: Key) -> DailyBudget {
        let day = today()
        if let budget = budgets[key], budget.day == day { return budget }
        let limit = policy.limit(app: key.app, api: key.api)
        return DailyBudget(day: day, cap: limit?.dailyCap, backfillCap: policy.backfillCap(of: limit))
    }
}
