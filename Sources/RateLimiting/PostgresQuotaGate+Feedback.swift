import Foundation
import Postgres

extension PostgresQuotaGate {
    /// Applies the store's answer for every process: a throttle blocks the (app, API) until `retryAfter` (or a
    /// growing backoff) has passed; a "per day" answer makes every `acquire` throw `QuotaError` until the Pacific
    /// day turns. `.accepted` costs nothing.
    ///
    /// When the database cannot be reached the answer is kept in this process only, and logged.
    public nonisolated func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        // Nearly every answer: returned here, on the caller's thread, rather than after a hop to the gate's thread
        // (which may be blocked in another call's round trip) and back.
        if feedback == .accepted { return }
        await record(app: app, api: api, feedback: feedback)
    }

    /// ``report(app:api:feedback:)`` of a throttle or a spent day, on the gate's thread.
    private func record(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        let key = QuotaKey(app: app, api: api)
        do {
            switch feedback {
            case .accepted:
                return
            case .throttled(let retryAfter):
                let (until, block) = try await throttle(app: app, api: api, retryAfter: retryAfter)
                // A detail: throttling is expected under load, and the job's summary line (a warning when the store
                // throttled calls) counts them, so --quiet shows one line per job rather than one per answer. A
                // capped Retry-After is a warning: the store (or a proxy) asked for something unreasonable.
                let capped = retryAfter.map { $0 > policy.longestThrottleBlock(app: app, api: api).seconds } ?? false
                logger.log(
                    level: capped ? .warning : .info,
                    "store throttled calls: blocking them for every process",
                    metadata: [
                        "app": "\(app)", "api": "\(api)", "blockedUntil": "\(PostgresTimestamp.millis(until))",
                        "reason": "\(block.reason)",
                    ])
            case .dailyQuotaExhausted(let day):
                try await markExhausted(app: app, api: api, day: day)
                logger.warning(
                    "store says the daily quota is spent: no more calls until the Pacific day turns",
                    metadata: ["app": "\(app)", "api": "\(api)"])
            }
        } catch {
            logger.error(
                "could not record the store's quota answer in the database; this process obeys it alone",
                metadata: ["app": "\(app)", "api": "\(api)", "error": "\(error)"])
            switch feedback {
            case .accepted:
                break
            case .throttled(let retryAfter):
                let block = policy.throttleBlock(
                    app: app, api: api, retryAfter: retryAfter, streak: policy.throttleBlockWindows, fraction: 1)
                let until = clock.now.advanced(by: block.duration)
                local[key].withLock { $0.localBlocks[key] = until }
            case .dailyQuotaExhausted(let day):
                local[key].withLock { $0.localExhausted[key] = day ?? PacificDay(containing: Date()) }
            }
        }
    }

    /// Records a throttle: bumps the streak, blocks the bucket for `retryAfter` seconds or the backoff of the
    /// streak (never longer than `policy.longestThrottleBlock`), keeps why, and counts it in the day.
    /// - Returns: the bucket's `blocked_until` (database time) and the block this answer asked for.
    @discardableResult
    func throttle(app: String, api: StoreAPI, retryAfter: Double?) async throws -> (Date, ThrottleBlock) {
        let policy = self.policy
        let reset = policy.throttleStreakReset.seconds
        let random = Double.random(in: 0...1)
        let widening = Self.marginWidening(policy.limit(app: app, api: api))
        return try await withConnection { connection in
            try connection.transaction { connection in
                let streakRow = try connection.query(
                    """
                    INSERT INTO quota_bucket AS b (app_id, api, throttle_streak, throttled_at)
                    VALUES ($1, $2, 1, clock_timestamp())
                    ON CONFLICT (app_id, api) DO UPDATE SET
                        throttle_streak = CASE WHEN b.throttled_at > clock_timestamp() - make_interval(secs => $3)
                                               THEN b.throttle_streak + 1 ELSE 1 END,
                        throttled_at = clock_timestamp()
                    RETURNING b.throttle_streak AS streak
                    """, [app, api.rawValue, reset])
                let streak: Int = try streakRow[0].decode("streak")
                let block = policy.throttleBlock(
                    app: app, api: api, retryAfter: retryAfter, streak: streak, fraction: random)
                // The reason follows the block that ends last: a shorter answer after a longer one changes neither.
                let blocked = try connection.query(
                    """
                    UPDATE quota_bucket
                    SET blocked_reason = CASE
                            WHEN blocked_until IS NULL OR blocked_until < clock_timestamp() + make_interval(secs => $3)
                            THEN $4 ELSE blocked_reason END,
                        blocked_until = greatest(blocked_until, clock_timestamp() + make_interval(secs => $3)),
                        margin_extra_ms = least($6::integer, greatest(2 * margin_extra_ms, $5::integer)),
                        margin_widened_at = clock_timestamp()
                    WHERE app_id = $1 AND api = $2
                    RETURNING blocked_until
                    """,
                    [
                        app, api.rawValue, block.duration.seconds, block.reason, widening.step, widening.most,
                    ])
                try connection.execute(
                    """
                    INSERT INTO quota_day AS d (app_id, api, pacific_day, throttled)
                    VALUES ($1, $2, quota_pacific_day(clock_timestamp()), 1)
                    ON CONFLICT (app_id, api, pacific_day) DO UPDATE SET throttled = d.throttled + 1
                    """, [app, api.rawValue])
                return (try blocked[0].decode("blocked_until", as: Date.self), block)
            }
        }
    }

    /// How a throttle widens the (app, API)'s latency margin, in milliseconds: to 10 % of its shortest window at
    /// first, doubling with each further throttle, never past 25 % of it (migration 0014 narrows it again over quiet
    /// windows). A throttled granted call means calls arrived later than the margin allowed: a loaded host, a slow
    /// path to the store. Widening at once by a tenth of the window makes a second refusal unlikely, at the cost of a
    /// tenth of the rate until the windows stay quiet.
    static func marginWidening(_ limit: QuotaLimit?) -> (step: Int, most: Int) {
        guard let shortest = limit?.windows.map(\.window).min() else { return (0, 0) }
        let milliseconds = shortest.seconds * 1000
        return (Int((milliseconds / 10).rounded()), Int((milliseconds / 4).rounded()))
    }

    /// Marks a Pacific day spent for (app, API), as the store said: the day the refused call left in (never later
    /// than the database's today), or today.
    func markExhausted(app: String, api: StoreAPI, day: PacificDay?) async throws {
        _ = try await withConnection { connection in
            try connection.execute(
                """
                INSERT INTO quota_day AS d (app_id, api, pacific_day, throttled, exhausted_at)
                VALUES ($1, $2, least(coalesce($3::date, 'infinity'), quota_pacific_day(clock_timestamp())), 1,
                        clock_timestamp())
                ON CONFLICT (app_id, api, pacific_day) DO UPDATE
                SET throttled = d.throttled + 1, exhausted_at = coalesce(d.exhausted_at, EXCLUDED.exhausted_at)
                """, [app, api.rawValue, day?.description])
        }
    }

    /// Today's use (the database's Pacific day) of every API of `app` that has a limit or was called today.
    /// - Throws: `PostgresError` when the database stays unreachable.
    public func usageToday(app: String) async throws -> [QuotaUsage] {
        let limits = policy.limits(for: app)
        let rows = try await withConnection { connection in
            let rows = try connection.query(
                """
                SELECT t.day::text AS day, d.api, d.used, d.used_backfill, d.refused, d.throttled,
                       d.exhausted_at IS NOT NULL AS store_exhausted
                FROM (SELECT quota_pacific_day(clock_timestamp()) AS day) t
                LEFT JOIN quota_day d ON d.app_id = $1 AND d.pacific_day = t.day
                """, [app])
            return try rows.map { row in
                (
                    day: try row.decode("day", as: String.self),
                    api: try row.decodeIfPresent("api", as: String.self).map(StoreAPI.init(rawValue:)),
                    used: try row.decodeIfPresent("used", as: Int.self) ?? 0,
                    usedBackfill: try row.decodeIfPresent("used_backfill", as: Int.self) ?? 0,
                    heldBack: try row.decodeIfPresent("refused", as: Int.self) ?? 0,
                    throttled: try row.decodeIfPresent("throttled", as: Int.self) ?? 0,
                    storeExhausted: try row.decodeIfPresent("store_exhausted", as: Bool.self) ?? false
                )
            }
        }
        let day = rows.first?.day ?? PacificDay(containing: Date()).description
        var usage: [StoreAPI: QuotaUsage] = [:]
        for api in limits.apis.keys {
            let limit = limits[api]
            usage[api] = QuotaUsage(
                api: api, day: day, used: 0, usedBackfill: 0, heldBack: 0, throttled: 0, cap: limit?.dailyCap,
                backfillCap: policy.backfillCap(of: limit), exhausted: limit?.dailyCap == 0)
        }
        for row in rows {
            guard let api = row.api else { continue }
            let limit = limits[api]
            let cap = limit?.dailyCap
            usage[api] = QuotaUsage(
                api: api, day: day, used: row.used, usedBackfill: row.usedBackfill, heldBack: row.heldBack,
                throttled: row.throttled, cap: cap, backfillCap: policy.backfillCap(of: limit),
                exhausted: row.storeExhausted || cap.map { row.used >= $0 } == true)
        }
        return usage.values.sorted { $0.api.rawValue < $1.api.rawValue }
    }
}
