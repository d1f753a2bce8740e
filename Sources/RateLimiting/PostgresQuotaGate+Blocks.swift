import Foundation
import Postgres

extension PostgresQuotaGate {
    /// Every block on `app`'s APIs now: stores' throttling answers still running, the store's "per day" answers of
    /// today and configured daily caps reached today, soonest API first.
    /// - Throws: `PostgresError` when the database stays unreachable.
    public func blocks(app: String) async throws -> [QuotaBlock] {
        let policy = self.policy
        return try await withConnection { connection in
            let rows = try connection.query(
                """
                SELECT b.api, 'throttled' AS kind, b.blocked_until AS until,
                       coalesce(b.blocked_reason, 'throttled') AS reason, NULL::integer AS used
                FROM quota_bucket b WHERE b.app_id = $1 AND b.blocked_until > clock_timestamp()
                UNION ALL
                SELECT d.api, CASE WHEN d.exhausted_at IS NOT NULL THEN 'store_exhausted' ELSE 'cap_reached' END,
                       (d.pacific_day + 1)::timestamp AT TIME ZONE 'America/Los_Angeles',
                       'the store said the daily quota is spent', d.used
                FROM quota_day d
                WHERE d.app_id = $1 AND d.pacific_day = quota_pacific_day(clock_timestamp())
                ORDER BY 1, 2
                """, [app])
            return try rows.compactMap { row -> QuotaBlock? in
                let api = StoreAPI(rawValue: try row.decode("api"))
                let kind = QuotaBlock.Kind(rawValue: try row.decode("kind")) ?? .throttled
                var reason: String = try row.decode("reason")
                if kind == .capReached {
                    // A day row that the store did not mark: a block only when the configured cap is used up.
                    let used: Int = try row.decode("used")
                    guard let cap = policy.limit(app: app, api: api)?.dailyCap, used >= cap else { return nil }
                    reason = "the configured daily cap of \(cap) calls is used up"
                }
                return QuotaBlock(api: api, kind: kind, until: try row.decode("until"), reason: reason)
            }
        }
    }

    /// Lifts the operator-liftable blocks of (app, API): a stored throttling block (and its backoff streak), and the
    /// store's "per day" mark of the current Pacific day (after the quota was raised in the store's console). A
    /// configured cap stays: it is lifted by raising it in the configuration.
    /// - Returns: what was lifted.
    /// - Throws: `PostgresError` when the database stays unreachable.
    public func clear(app: String, api: StoreAPI) async throws -> QuotaClearance {
        let current = try await blocks(app: app).filter { $0.api == api }
        let exhausted = try await withConnection { connection in
            try connection.transaction { connection in
                try connection.execute(
                    """
                    UPDATE quota_bucket SET blocked_until = NULL, blocked_reason = NULL, throttle_streak = 0
                    WHERE app_id = $1 AND api = $2
                    """, [app, api.rawValue])
                return try connection.query(
                    """
                    UPDATE quota_day SET exhausted_at = NULL
                    WHERE app_id = $1 AND api = $2 AND pacific_day = quota_pacific_day(clock_timestamp())
                      AND exhausted_at IS NOT NULL
                    RETURNING pacific_day::text AS day
                    """, [app, api.rawValue]
                ).first.map { try $0.decode("day", as: String.self) }
            }
        }
        let key = QuotaKey(app: app, api: api)
        local[key].withLock { state in
            state.localBlocks[key] = nil
            state.localExhausted[key] = nil
        }
        return QuotaClearance(
            throttle: current.first { $0.kind == .throttled },
            exhaustedDay: exhausted.flatMap(PacificDay.init(isoDate:)),
            capReached: current.contains { $0.kind == .capReached } ? policy.limit(app: app, api: api)?.dailyCap : nil)
    }
}
