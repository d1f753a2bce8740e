import Foundation
import Postgres
import RateLimiting
import Reconciler
import TestSupport
import Testing

/// The shared limiter against a real PostgreSQL. Serialized: the rate measurements should not compete with each
/// other for the machine's two cores.
@Suite("PostgresQuotaGate", .serialized)
struct PostgresQuotaGateTests {
    static let api = StoreAPI.googleVoidedPurchases

    /// A new, migrated database.
    static func database(_ prefix: String) throws -> String {
        let conninfo = try TestDatabase.create(prefix: prefix)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        return conninfo
    }

    static func policy(_ limit: QuotaLimit, share: Double = 0.5) -> QuotaPolicy {
        QuotaPolicy(defaultLimits: QuotaLimits([api: limit]), backfillShare: share)
    }

    /// A database time as an exact count of microseconds (PostgreSQL's precision), so window checks are exact.
    static func microseconds(_ date: Date) -> Duration {
        .microseconds(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
    }

    @Test func theDatabaseAgreesOnThePacificDayAcrossDaylightSavingChanges() throws {
        let connection = try PostgresConnection(conninfo: Self.database("qday"))
        defer { connection.close() }
        for (instant, day) in PacificDayTests.instants {
            let row = try connection.query("SELECT quota_pacific_day($1::timestamptz)::text AS day", [instant])[0]
            #expect(try row.decode("day", as: String.self) == day, "\(instant)")
        }
    }

    @Test func concurrentGatesNeverExceedAWindowAndUseItFully() async throws {
        let conninfo = try Self.database("qconc")
        let limit = RateLimit(20, per: .seconds(2))
        let policy = Self.policy(QuotaLimit(windows: [limit]))
        let gates = (0..<4).map { _ in PostgresQuotaGate(conninfo: conninfo, policy: policy) }
        let grants = try await withThrowingTaskGroup(of: [QuotaGrant].self) { group in
            for gate in gates {
                group.addTask {
                    var grants: [QuotaGrant] = []
                    for _ in 0..<20 {
                        grants.append(try await gate.acquireGrant(app: "a", api: Self.api, purpose: .incremental))
                    }
                    return grants
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(grants.count == 80)
        let times = GrantTimes(grants.map { Self.microseconds($0.grantedAt) })
        #expect(times.maximumInAnyHalfOpenWindow(limit.enforcedWindow) <= limit.count)
        #expect(times.maximumInAnyClosedWindow(limit.window) <= limit.count)
        #expect(try #require(times.smallestSpan(ofGrants: limit.count)) >= limit.enforcedWindow)
        let published = Double(limit.count) / limit.window.secondsValue
        let ratio = try #require(times.sustainedRate(burst: limit.count)) / published
        var statistics = QuotaGateStatistics()
        for gate in gates {
            let each = gate.statistics
            statistics.attempts += each.attempts
            statistics.attemptTime += each.attemptTime
            statistics.waits += each.waits
            statistics.retaken += each.retaken
            await gate.close()
        }
        // Every grant is counted once in the day; a grant retaken on a loaded host is counted and left unused.
        let used = grants.map(\.usedToday)
        #expect(Set(used).count == 80 && used.max() == 80 + statistics.retaken)
        let meanMilliseconds = try #require(statistics.meanAttemptRoundTrip).secondsValue * 1000
        print(
            "quota: 4 gates, \(limit) (enforced over \(limit.enforcedWindow)): achieved ÷ allowed rate = "
                + String(format: "%.3f", ratio)
                + " (at most \(String(format: "%.3f", limit.sustainedRate / published))), "
                + "\(statistics.attempts) attempts, mean round trip " + String(format: "%.3f ms", meanMilliseconds))
        // A loose floor: the machine is shared; the figure itself is printed above. Grants retaken because the host
        // stalled them past the margin use the window too, unseen here.
        #expect(ratio >= 0.5 || statistics.retaken > 0)
    }

    /// A grant that reaches its caller later than its window's margin would be sent late, and the store would
    /// count it inside the next window: it is left counted and taken again, at most twice per call. With a margin
    /// shorter than any database round trip every grant is late, so every call takes three.
    @Test func aGrantLaterThanItsMarginIsTakenAgainTwiceAtMost() async throws {
        let conninfo = try Self.database("qretake")
        let late = RateLimit(100, per: .seconds(10), margin: .nanoseconds(1))
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: [late])))
        var used: [Int] = []
        for _ in 0..<3 {
            used.append(try await gate.acquireGrant(app: "a", api: Self.api, purpose: .incremental).usedToday)
        }
        #expect(used == [3, 6, 9])
        #expect(gate.statistics.retaken == 6)
        // Apple enforces per hour: its grants are never retaken, whatever the margin.
        let apple = PostgresQuotaGate(
            conninfo: conninfo,
            policy: QuotaPolicy(defaultLimits: QuotaLimits([.appleRefundHistory: QuotaLimit(windows: [late])])))
        _ = try await apple.acquireGrant(app: "a", api: .appleRefundHistory, purpose: .incremental)
        #expect(apple.statistics.retaken == 0)
        await gate.close()
        await apple.close()
    }

    /// The grant says by when its call must leave: the tightest window's margin after it was asked for. After two
    /// late grants, and for Apple (counted per hour), there is none.
    @Test func aGrantSaysByWhenItsCallMustLeave() async throws {
        let conninfo = try Self.database("qleave")
        let windows = [
            RateLimit(100, per: .seconds(10), margin: .milliseconds(400)),
            RateLimit(500, per: .seconds(60), margin: .seconds(1)),
        ]
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: windows)))
        _ = try await gate.acquire(app: "a", api: Self.api, purpose: .incremental)  // connects
        let asked = ContinuousClock.now
        let leaveBy = try #require(try await gate.acquire(app: "a", api: Self.api, purpose: .incremental))
        let returned = ContinuousClock.now
        // The grant was asked for between `asked` and `returned`: its deadline is 400 ms after that moment.
        #expect(leaveBy >= asked + .milliseconds(400))
        #expect(leaveBy <= returned + .milliseconds(400))
        let late = PostgresQuotaGate(
            conninfo: conninfo,
            policy: Self.policy(QuotaLimit(windows: [RateLimit(100, per: .seconds(10), margin: .nanoseconds(1))])))
        #expect(try await late.acquire(app: "b", api: Self.api, purpose: .incremental) == nil)
        #expect(late.statistics.retaken == 2)
        let apple = PostgresQuotaGate(
            conninfo: conninfo,
            policy: QuotaPolicy(defaultLimits: QuotaLimits([.appleRefundHistory: QuotaLimit(windows: windows)])))
        #expect(try await apple.acquire(app: "a", api: .appleRefundHistory, purpose: .incremental) == nil)
        for gate in [gate, late, apple] { await gate.close() }
    }

    @Test func everyWindowOfAnAPIHolds() async throws {
        let conninfo = try Self.database("qwindows")
        let short = RateLimit(2, per: .milliseconds(200), margin: .milliseconds(10))
        let long = RateLimit(5, per: .seconds(1))
        let gates = (0..<2).map { _ in
            PostgresQuotaGate(conninfo: conninfo, policy: Self.policy(QuotaLimit(windows: [short, long])))
        }
        let grants = try await withThrowingTaskGroup(of: [QuotaGrant].self) { group in
            for gate in gates {
                group.addTask {
                    var grants: [QuotaGrant] = []
                    for _ in 0..<6 {
                        grants.append(try await gate.acquireGrant(app: "a", api: Self.api, purpose: .incremental))
                    }
                    return grants
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let times = GrantTimes(grants.map { Self.microseconds($0.grantedAt) })
        #expect(times.times.count == 12)
        for window in [short, long] {
            #expect(times.maximumInAnyHalfOpenWindow(window.enforcedWindow) <= window.count, "\(window)")
            #expect(try #require(times.smallestSpan(ofGrants: window.count)) >= window.enforcedWindow, "\(window)")
        }
    }

    @Test func aCapReachedThroughOneGateStopsTheOthers() async throws {
        let conninfo = try Self.database("qcap")
        let policy = Self.policy(QuotaLimit(windows: [], dailyCap: 5))
        let first = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        let second = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        for _ in 0..<5 { try await first.acquire(app: "a", api: Self.api, purpose: .incremental) }
        let error = await #expect(throws: QuotaError.self) {
            try await second.acquire(app: "a", api: Self.api, purpose: .incremental)
        }
        #expect(error?.reason.contains("all 5 calls") == true)
        let usage = try #require(try await second.usageToday(app: "a").first { $0.api == Self.api })
        #expect(usage.used == 5)
        #expect(usage.heldBack == 1)
        #expect(usage.exhausted)
        #expect(usage.day == PacificDay(containing: Date()).description)
        // Another app's budget is its own.
        try await second.acquire(app: "b", api: Self.api, purpose: .incremental)
    }

    @Test func aBackfillStopsAtItsShareAndLeavesTheRestToIncrementalSyncs() async throws {
        let conninfo = try Self.database("qshare")
        let policy = Self.policy(QuotaLimit(windows: [], dailyCap: 10), share: 0.5)
        let backfill = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        let nightly = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        for _ in 0..<5 { try await backfill.acquire(app: "a", api: Self.api, purpose: .backfill) }
        let error = await #expect(throws: QuotaError.self) {
            try await backfill.acquire(app: "a", api: Self.api, purpose: .backfill)
        }
        #expect(error?.reason.contains("backfills used their 5") == true)
        for _ in 0..<5 { try await nightly.acquire(app: "a", api: Self.api, purpose: .incremental) }
        await #expect(throws: QuotaError.self) {
            try await nightly.acquire(app: "a", api: Self.api, purpose: .incremental)
        }
        let usage = try #require(try await nightly.usageToday(app: "a").first { $0.api == Self.api })
        #expect(usage.used == 10)
        #expect(usage.usedBackfill == 5)
        #expect(usage.backfillCap == 5)
        #expect(usage.heldBack == 2)
    }

    @Test func aLostConnectionIsOpenedAgain() async throws {
        let conninfo = try Self.database("qlost")
        let gate = PostgresQuotaGate(conninfo: conninfo)
        try await gate.acquire(app: "a", api: .appleRefundHistory, purpose: .incremental)
        let admin = try PostgresConnection(conninfo: conninfo)
        defer { admin.close() }
        let killed = try admin.query(
            """
            SELECT count(pg_terminate_backend(pid)) AS killed FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """)[0]
        #expect(try killed.decode("killed", as: Int.self) == 1)
        let grant = try await gate.acquireGrant(app: "a", api: .appleRefundHistory, purpose: .incremental)
        #expect(grant.usedToday == 2)
        #expect(gate.statistics.reconnects == 1)
    }

    @Test func aCancelledWaitEndsAtOnce() async throws {
        let conninfo = try Self.database("qcancel")
        let gate = PostgresQuotaGate(conninfo: conninfo)
        await gate.report(app: "a", api: Self.api, feedback: .throttled(retryAfter: 600))
        await #expect(throws: CancellationError.self) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await gate.acquire(app: "a", api: Self.api, purpose: .incremental) }
                group.cancelAll()
                try await group.waitForAll()
            }
        }
    }
}
