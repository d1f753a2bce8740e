import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

@Suite("Recheck selection: window arithmetic and index use")
struct RecheckPlannerTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func theWindowRunsFromLagBeforeToLeadAfterNow() {
        let planner = RecheckPlanner(lead: 72 * 3600, lag: 24 * 3600, watchInterval: 12 * 3600)
        let window = planner.window(now: Self.now)
        #expect(window.from == Self.now.addingTimeInterval(-86_400))
        #expect(window.to == Self.now.addingTimeInterval(259_200))
        #expect(window.watchCutoff == Self.now.addingTimeInterval(-43_200))
        let options = ExpiryRecheck.Options(RecheckConfig(), lead: ConfigDuration(text: "48h"), lag: nil)
        #expect(options.lead == 172_800 && options.lag == 86_400 && options.concurrency == 4)
    }

    /// 200,000 subscriptions, most of them checked after their last expiry: the plan must read the three partial
    /// indexes and never scan the table.
    @Test func theDueQueryUsesThePartialIndexesNotATableScan() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "recheck_plan"))
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('big', 'google', 'com.big')")
        try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state, expires_at, expiry_changed_at,
                                      last_checked_at, flagged_at)
            SELECT 'big', 'token-' || i, 'monthly',
                   CASE WHEN i % 100 = 0 THEN 'grace' WHEN i % 100 = 1 THEN 'billing_retry'
                        WHEN e < $1 THEN 'expired' ELSE 'active' END,
                   e, e - interval '30 days',
                   CASE WHEN i % 500 = 7 THEN NULL
                        WHEN e < $1 THEN e + interval '1 hour' ELSE e - interval '20 days' END,
                   CASE WHEN i % 1000 = 5 THEN $1 END
            FROM generate_series(1, 200000) AS i,
                 LATERAL (SELECT $1::timestamptz - interval '300 days' + (i * 37 % 400) * interval '1 day'
                                 + i * interval '1 second' AS e) AS x
            """, [Self.now])
        // Vacuumed, as autovacuum keeps a table the jobs write nightly: the visibility map allows index-only scans.
        try connection.execute("VACUUM ANALYZE subscription")
        let planner = RecheckPlanner(lead: 72 * 3600, lag: 24 * 3600)
        let parameters = planner.parameters(app: "big", window: planner.window(now: Self.now))
        let plan = try connection.query("EXPLAIN " + RecheckPlanner.dueSQL, parameters).map {
            try $0.decode("QUERY PLAN", as: String.self)
        }.joined(separator: "\n")
        print("recheck due query plan on 200,000 subscriptions:\n\(plan)")
        #expect(!plan.contains("Seq Scan on subscription"), "\(plan)")
        for index in ["subscription_recheck_due", "subscription_recheck_expiring"] {
            #expect(plan.contains("Index Only Scan using \(index)"), "\(index) not read alone:\n\(plan)")
        }
        // The watched rows are 2 % of this table, so the planner may prefer a bitmap scan here; on 10,000,000 rows
        // (scripts/bench) it reads this index alone too.
        #expect(plan.contains("subscription_recheck_watch"), "subscription_recheck_watch unused:\n\(plan)")
        let started = ContinuousClock.now
        let due = try planner.due(app: "big", now: Self.now, on: connection)
        print("recheck due query: \(due.count) of 200,000 due, listed in \(ContinuousClock.now - started)")
        #expect(!due.isEmpty && due.count < 20_000)
        // Rows in two parts (a watched subscription near expiry) are listed once, in id order.
        let counts = try connection.query(
            "SELECT count(*) AS listed, count(DISTINCT id) AS rows FROM (\(RecheckPlanner.dueSQL)) AS due", parameters)[
                0]
        let listed: Int = try counts.decode("listed")
        let rows: Int = try counts.decode("rows")
        #expect(listed > rows, "no row is in two parts: the test no longer covers the repeats")
        #expect(due.count == rows)
        #expect(due.map(\.id) == due.map(\.id).sorted() && Set(due.map(\.id)).count == due.count)
    }
}
