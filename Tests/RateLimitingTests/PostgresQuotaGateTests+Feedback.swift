import Foundation
import Postgres
import RateLimiting
import Reconciler
import TestSupport
import Testing

extension PostgresQuotaGateTests {
    /// A store's throttle widens the (app, API)'s margin for every process: a tenth of the shortest window, doubled
    /// by each further throttle up to a quarter; ten of the longest windows without a throttle halve it again. The
    /// window is a minute long, so that a slow host between the grants cannot let it reopen.
    @Test func aThrottleWidensTheMarginForEveryGateAndQuietWindowsNarrowIt() async throws {
        let conninfo = try Self.database("qlearn")
        let limit = RateLimit(2, per: .seconds(60), margin: .milliseconds(25))
        let policy = Self.policy(QuotaLimit(windows: [limit]))
        let reporter = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        let other = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        let watcher = try PostgresConnection(conninfo: conninfo)
        defer { watcher.close() }
        func extra() throws -> Int {
            try watcher.query("SELECT margin_extra_ms AS m FROM quota_bucket WHERE app_id = 'a'")[0].decode("m")
        }
        var learnt: [Int] = []
        for _ in 0..<3 {
            await reporter.report(app: "a", api: Self.api, feedback: .throttled(retryAfter: 0.001))
            learnt.append(try extra())
        }
        #expect(learnt == [6000, 12000, 15000])
        // The other gate spaces its calls by the window, the configured margin and the learnt one.
        try watcher.execute("UPDATE quota_bucket SET blocked_until = NULL WHERE app_id = 'a'")
        let first = try await other.acquireGrant(app: "a", api: Self.api, purpose: .incremental)
        _ = try await other.acquireGrant(app: "a", api: Self.api, purpose: .incremental)
        let attempt = try await other.attempt(app: "a", api: Self.api, purpose: .incremental)
        let after: Date = try watcher.query("SELECT clock_timestamp() AS t")[0].decode("t")
        #expect(attempt.grant == nil)
        // The window opens at the first grant + 60 s + 25 ms + 15 s; the attempt was answered before `after`.
        let opensAfter = attempt.wait.secondsValue + after.timeIntervalSince(first.grantedAt)
        #expect(opensAfter >= 75.024, "\(attempt.wait)")
        // Ten quiet windows (10 min) later the next attempt halves it.
        try watcher.execute("UPDATE quota_bucket SET margin_widened_at = now() - interval '601 seconds'")
        _ = try await other.attempt(app: "a", api: Self.api, purpose: .incremental)
        #expect(try extra() == 7500)
        await reporter.close()
        await other.close()
    }

    @Test func aThrottleReportedByOneGateBlocksTheOthers() async throws {
        let conninfo = try Self.database("qthrottle")
        let policy = Self.policy(QuotaLimit(windows: [RateLimit(100, per: .seconds(1))]))
        let reporter = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        let other = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        try await reporter.acquire(app: "a", api: Self.api, purpose: .incremental)
        await reporter.report(app: "a", api: Self.api, feedback: .throttled(retryAfter: 30))
        let attempt = try await other.attempt(app: "a", api: Self.api, purpose: .incremental)
        #expect(attempt.grant == nil)
        // 30 s less the time between the two statements (a loaded host may stall seconds between them).
        #expect(attempt.wait > .seconds(20) && attempt.wait <= .seconds(30))

        // A short block, waited out for real: the grant comes no earlier than the block's end.
        await reporter.report(app: "a", api: .googleSubscriptions, feedback: .throttled(retryAfter: 0.3))
        let grant = try await other.acquireGrant(app: "a", api: .googleSubscriptions, purpose: .incremental)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let row = try connection.query(
            "SELECT blocked_until, throttle_streak FROM quota_bucket WHERE app_id = 'a' AND api = $1",
            [StoreAPI.googleSubscriptions.rawValue])[0]
        #expect(grant.grantedAt >= (try row.decode("blocked_until", as: Date.self)))
        let usage = try await other.usageToday(app: "a")
        #expect(usage.first { $0.api == Self.api }?.throttled == 1)
    }

    @Test func anUnboundedRetryAfterBlocksAFewWindowsAtMostAndIsListedWithItsReason() async throws {
        let conninfo = try Self.database("qcap")
        let gate = PostgresQuotaGate(conninfo: conninfo)
        await gate.report(app: "a", api: Self.api, feedback: .throttled(retryAfter: 99_999_999))
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let row = try connection.query(
            """
            SELECT extract(epoch FROM blocked_until - throttled_at)::float8 AS blocked, blocked_reason
            FROM quota_bucket WHERE app_id = 'a' AND api = $1
            """, [Self.api.rawValue])[0]
        // 3 × (60 s + 250 ms margin), from the throttle's time (the block is set a moment after it).
        let blocked = try row.decode("blocked", as: Double.self)
        #expect(blocked >= 180.75 && blocked < 181, "blocked \(blocked) s")
        let blocks = try await gate.blocks(app: "a")
        #expect(blocks.count == 1)
        #expect(blocks.first?.api == Self.api && blocks.first?.kind == .throttled)
        #expect(blocks.first?.reason.contains("capped at 180.75s") == true, "\(blocks)")
    }

    /// A call sent just before Pacific midnight and refused "per day" just after spent the day it left in: today stays
    /// open, and yesterday's row records the store's answer.
    @Test func aDailyAnswerToACallSentTheDayBeforeMarksThatDay() async throws {
        let conninfo = try Self.database("qyesterday")
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: [])))
        let today = PacificDay(containing: Date())
        let yesterday = PacificDay(containing: today.start.addingTimeInterval(-1))
        await gate.report(app: "a", api: Self.api, feedback: .dailyQuotaExhausted(sentOn: yesterday))
        #expect(try await gate.blocks(app: "a").isEmpty)
        try await gate.acquire(app: "a", api: Self.api, purpose: .incremental)
        let watcher = try PostgresConnection(conninfo: conninfo)
        defer { watcher.close() }
        let spent = try watcher.query(
            "SELECT pacific_day::text AS day FROM quota_day WHERE app_id = 'a' AND exhausted_at IS NOT NULL")
        #expect(try spent.map { try $0.decode("day", as: String.self) } == [yesterday.description])
    }

    @Test func clearLiftsAThrottleAndTheStoresSpentDayButNotAConfiguredCap() async throws {
        let conninfo = try Self.database("qclear")
        let policy = Self.policy(QuotaLimit(windows: [], dailyCap: 2))
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        await gate.report(app: "a", api: Self.api, feedback: .throttled(retryAfter: 60))
        await gate.report(app: "a", api: Self.api, feedback: .dailyQuotaExhausted(sentOn: nil))
        let blocks = try await gate.blocks(app: "a")
        #expect(blocks.map(\.kind) == [.storeExhausted, .throttled], "\(blocks)")
        let spent = try #require(blocks.first)
        // Until the Pacific day turns: the block ends on a Pacific midnight, less than 25 hours ahead.
        #expect(spent.until == PacificDay(containing: spent.until.addingTimeInterval(-1)).end)
        #expect(spent.until > Date() && spent.until < Date().addingTimeInterval(25 * 3600))
        await #expect(throws: QuotaError.self) {
            try await gate.acquire(app: "a", api: Self.api, purpose: .incremental)
        }

        let cleared = try await gate.clear(app: "a", api: Self.api)
        #expect(cleared.throttle?.kind == .throttled)
        #expect(cleared.exhaustedDay != nil && cleared.capReached == nil)
        #expect(try await gate.blocks(app: "a").isEmpty)
        let attempt = try await gate.attempt(app: "a", api: Self.api, purpose: .incremental)
        #expect(attempt.grant != nil, "a cleared API is granted at once")

        // The configured cap (2 a day) is listed as a block once used up, and clear leaves it.
        try await gate.acquire(app: "a", api: Self.api, purpose: .incremental)
        #expect(try await gate.blocks(app: "a").map(\.kind) == [.capReached])
        let again = try await gate.clear(app: "a", api: Self.api)
        #expect(again.throttle == nil && again.exhaustedDay == nil && again.capReached == 2)
        #expect(try await gate.blocks(app: "a").map(\.kind) == [.capReached])
    }

    @Test func throttlesWithoutRetryAfterBackOffFurtherEachTime() async throws {
        let conninfo = try Self.database("qbackoff")
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: [])))
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        for (streak, ceiling) in [(1, 1.0), (2, 2.0), (3, 4.0)] {
            await gate.report(app: "a", api: Self.api, feedback: .throttled(retryAfter: nil))
            let row = try connection.query(
                """
                SELECT throttle_streak, extract(epoch FROM blocked_until - throttled_at)::float8 AS blocked
                FROM quota_bucket WHERE app_id = 'a' AND api = $1
                """, [Self.api.rawValue])[0]
            #expect(try row.decode("throttle_streak", as: Int.self) == streak)
            let blocked = try row.decode("blocked", as: Double.self)
            // Measured between two statements: a loaded host adds its stall between them to the upper end.
            #expect(blocked >= 0.99 && blocked <= ceiling + 0.75, "throttle \(streak): blocked \(blocked) s")
        }
    }

    @Test func theStoresDailyAnswerStopsEveryGate() async throws {
        let conninfo = try Self.database("qexhaust")
        let reporter = PostgresQuotaGate(conninfo: conninfo)
        let other = PostgresQuotaGate(conninfo: conninfo)
        try await other.acquire(app: "a", api: .appleRefundHistory, purpose: .incremental)
        await reporter.report(app: "a", api: .appleRefundHistory, feedback: .dailyQuotaExhausted(sentOn: nil))
        let error = await #expect(throws: QuotaError.self) {
            try await other.acquire(app: "a", api: .appleRefundHistory, purpose: .incremental)
        }
        #expect(error?.reason.contains("the store said") == true)
        try await other.acquire(app: "a", api: .appleNotificationHistory, purpose: .incremental)
        let usage = try await other.usageToday(app: "a")
        #expect(usage.first { $0.api == .appleRefundHistory }?.exhausted == true)
        #expect(usage.first { $0.api == .appleNotificationHistory }?.used == 1)
        // Every published API is listed, called or not.
        #expect(Set(usage.map(\.api)) == Set(QuotaLimits.published.apis.keys))
    }
}
