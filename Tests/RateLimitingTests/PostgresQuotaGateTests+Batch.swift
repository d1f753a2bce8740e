import Foundation
import Postgres
import RateLimiting
import Testing

/// Grants in batches: calls of one (app, API, purpose) waiting in a gate at once share one round trip.
extension PostgresQuotaGateTests {
    /// `quota_acquire_batch` on its own: k calls at one instant need at most count - k grants in each window, and it
    /// shares its log with `quota_acquire` (processes of the previous version).
    @Test func theBatchFunctionGrantsWhatEveryWindowAllowsAndSharesTheLog() throws {
        let connection = try PostgresConnection(conninfo: Self.database("qbatchsql"))
        defer { connection.close() }
        func batch(_ wanted: Int, counts: String = "{5,8}", windows: String = "{1,60}") throws -> PostgresRow {
            try connection.query(
                """
                SELECT granted, wait_seconds, refusal, day_used FROM quota_acquire_batch(
                    'a', 'google.orders', false, $1, $2::integer[], $3::double precision[], 12, NULL)
                """, [wanted, counts, windows])[0]
        }
        // 5 in any second, 8 in any minute: of 3 asked all 3, then of 4 only 2 (5 in the second), then none.
        var row = try batch(3)
        #expect(try row.decode("granted", as: Int.self) == 3)
        row = try batch(4)
        #expect(try row.decode("granted", as: Int.self) == 2)
        #expect(try row.decode("day_used", as: Int.self) == 5)
        let wait = try row.decode("wait_seconds", as: Double.self)
        // Less than the second by the time between the two statements (a loaded host stalls between them).
        #expect(wait > 0 && wait <= 1)
        // The previous version's function reads the same log: the second is full for it too.
        let single = try connection.query(
            "SELECT granted_at, wait_seconds FROM quota_acquire('a', 'google.orders', false, '{5,8}', '{1,60}', 12, NULL)"
        )[0]
        #expect(try single.decodeIfPresent("granted_at", as: Date.self) == nil)
        #expect(try single.decode("wait_seconds", as: Double.self) > 0)
        let log = try connection.query(
            "SELECT cardinality(grants) AS n, cardinality(ARRAY(SELECT DISTINCT unnest(grants))) AS instants "
                + "FROM quota_bucket WHERE app_id = 'a' AND api = 'google.orders'")[0]
        #expect(try log.decode("n", as: Int.self) == 5)
        #expect(try log.decode("instants", as: Int.self) == 2)
        // With the short window wide open, the minute's 8 allow 3 more; the day's cap of 12 then allows the minute's
        // rest only in the next minute, and a batch bigger than the cap's rest is refused beyond it.
        row = try batch(6, counts: "{8}", windows: "{60}")
        #expect(try row.decode("granted", as: Int.self) == 3)
        #expect(try row.decodeIfPresent("refusal", as: String.self) == nil)
        row = try batch(6, counts: "{}", windows: "{}")
        #expect(try row.decode("granted", as: Int.self) == 4)
        #expect(try row.decode("refusal", as: String.self) == "cap_reached")
        #expect(try row.decode("day_used", as: Int.self) == 12)
        let day = try connection.query("SELECT refused FROM quota_day WHERE app_id = 'a'")[0]
        #expect(try day.decode("refused", as: Int.self) == 2)
    }

    /// Calls that arrive while a round trip of their key is on its way share the next one. The bucket's row is held
    /// locked, so the first caller's round trip waits at the database; the other 39 arrive meanwhile and are granted
    /// together: 40 calls, two round trips.
    @Test func callersArrivingDuringARoundTripShareTheNext() async throws {
        let conninfo = try Self.database("qbatch")
        // Apple's calls are counted per hour: no grant is ever taken again, however long the lock held it.
        let apple = StoreAPI.appleRefundHistory
        let gate = PostgresQuotaGate(
            conninfo: conninfo,
            policy: QuotaPolicy(
                defaultLimits: QuotaLimits([apple: QuotaLimit(windows: [RateLimit(50, per: .seconds(1))])])))
        _ = try await gate.acquireGrant(app: "b", api: apple, purpose: .incremental)  // connects
        let holder = try PostgresConnection(conninfo: conninfo)
        defer { holder.close() }
        try holder.execute("INSERT INTO quota_bucket (app_id, api) VALUES ('a', $1)", [apple.rawValue])
        try holder.execute("BEGIN")
        try holder.execute("SELECT 1 FROM quota_bucket WHERE app_id = 'a' FOR UPDATE")
        func waitingForTheLock() throws -> Bool {
            try holder.query("SELECT count(*) AS n FROM pg_locks WHERE NOT granted")[0].decode("n", as: Int.self) > 0
        }
        let grants = try await withThrowingTaskGroup(of: QuotaGrant.self) { group in
            group.addTask { try await gate.acquireGrant(app: "a", api: apple, purpose: .incremental) }
            while try !waitingForTheLock() { try await Task.sleep(for: .milliseconds(1)) }
            for _ in 0..<39 {
                group.addTask { try await gate.acquireGrant(app: "a", api: apple, purpose: .incremental) }
            }
            // One of the 39 leads the next batch, the other 38 join it.
            while gate.statistics.joined < 38 { try await Task.sleep(for: .milliseconds(1)) }
            try holder.execute("COMMIT")
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let statistics = gate.statistics
        await gate.close()
        #expect(Set(grants.map(\.usedToday)) == Set(1...40))
        #expect(statistics.attempts == 3)
        #expect(statistics.grants == 41)
        #expect(statistics.largestBatch == 39)
        #expect(Set(grants.filter { $0.usedToday > 1 }.map(\.grantedAt)).count == 1)
    }

    /// 40 callers at once on 5 calls per half second: never more than 5 granted in any window.
    @Test func fortyConcurrentCallersNeverExceedAWindow() async throws {
        let conninfo = try Self.database("qbatchwin")
        let limit = RateLimit(5, per: .milliseconds(500))
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: [limit])))
        let grants = try await withThrowingTaskGroup(of: QuotaGrant.self) { group in
            for _ in 0..<40 {
                group.addTask { try await gate.acquireGrant(app: "a", api: Self.api, purpose: .incremental) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let statistics = gate.statistics
        await gate.close()
        // A grant that reached its caller later than the margin (a loaded host) was counted and taken again.
        #expect(Set(grants.map(\.usedToday)).count == 40)
        #expect(grants.map(\.usedToday).max() == 40 + statistics.retaken)
        let times = GrantTimes(grants.map { Self.microseconds($0.grantedAt) })
        #expect(times.maximumInAnyHalfOpenWindow(limit.enforcedWindow) <= limit.count)
        #expect(times.maximumInAnyClosedWindow(limit.window) <= limit.count)
        print(
            "quota: 40 callers on \(limit): \(statistics.attempts) round trips, largest batch \(statistics.largestBatch)"
        )
    }

    /// A daily cap reached inside a batch grants exactly the cap and refuses every other call with the cap's error.
    @Test func aCapReachedByABatchGrantsExactlyTheCap() async throws {
        let conninfo = try Self.database("qbatchcap")
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: [], dailyCap: 7)))
        let outcomes = await withTaskGroup(of: Result<QuotaGrant, any Error>.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    do {
                        return .success(try await gate.acquireGrant(app: "a", api: Self.api, purpose: .incremental))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let granted = outcomes.compactMap { try? $0.get() }
        #expect(Set(granted.map(\.usedToday)) == Set(1...7))
        let refusals = outcomes.compactMap { outcome -> QuotaError? in
            if case .failure(let error) = outcome { return error as? QuotaError }
            return nil
        }
        #expect(refusals.count == 5)
        #expect(refusals.allSatisfy { $0.reason.contains("all 7 calls") })
        let usage = try #require(try await gate.usageToday(app: "a").first { $0.api == Self.api })
        #expect(usage.used == 7)
        #expect(usage.heldBack == 5)
        await gate.close()
    }

    /// Two gates (two processes), 15 callers each at once, sharing one bucket of 5 calls per half second: together
    /// never more than 5 in any window.
    @Test func twoGatesBatchingTogetherNeverExceedAWindow() async throws {
        let conninfo = try Self.database("qbatchtwo")
        let limit = RateLimit(5, per: .milliseconds(500))
        let gates = (0..<2).map { _ in
            PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: [limit])))
        }
        let grants = try await withThrowingTaskGroup(of: QuotaGrant.self) { group in
            for gate in gates {
                for _ in 0..<15 {
                    group.addTask { try await gate.acquireGrant(app: "a", api: Self.api, purpose: .incremental) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let retaken = gates.map(\.statistics.retaken).reduce(0, +)
        for gate in gates { await gate.close() }
        #expect(Set(grants.map(\.usedToday)).count == 30)
        #expect(grants.map(\.usedToday).max() == 30 + retaken)
        let times = GrantTimes(grants.map { Self.microseconds($0.grantedAt) })
        #expect(times.maximumInAnyHalfOpenWindow(limit.enforcedWindow) <= limit.count)
        #expect(times.maximumInAnyClosedWindow(limit.window) <= limit.count)
        #expect(try #require(times.smallestSpan(ofGrants: limit.count)) >= limit.enforcedWindow)
    }
}
