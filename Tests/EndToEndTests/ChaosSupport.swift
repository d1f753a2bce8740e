import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// What the chaos suites share: a small scenario whose store answers never change while the tests run, a nightly
/// run of the built binary, a snapshot of every reconciled row that does not depend on when or how often a job ran,
/// and the checks that the simulator never saw a call over a published limit.
enum Chaos {
    /// The scenario: both stores, refunds, voids (some quantity-based, some of older renewals) and subscriptions.
    /// The simulator's clock stands still ten minutes before the test starts, so every run of the test, however
    /// late or often, sees the same store: voids and notifications all lie before the window ends storerecon asks for,
    /// and `endTime` after the simulator's now is clamped, as Google does in practice. Computed afresh for each test:
    /// a store clock stood still since the first test of the process would, twenty minutes on, lie before the later
    /// slices of a window (which Google, whose clock runs, never sees).
    static var options: SimulatorOptions {
        let anchor = Int64(Date().timeIntervalSince1970 * 1000) - 600_000
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 1010, anchorMillis: anchor, subscriptions: 240, oneTimePurchases: 80, refunds: 70,
                historyDays: 25, futureDays: 1, sandboxShare: 0, maxRefundsPerPurchase: 2, renewalVoidShare: 0.2))
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        options.futureEndTime = .clamp
        return options
    }

    /// Every subscription is due for the recheck whatever the hour, so which ones are asked about does not depend on
    /// when a run starts; the sweep is off so the Apple refund job reads what notifications name.
    ///
    /// Apple's rates are asked at 200 a second, above the published 10 and 50: the simulator enforces them per hour,
    /// as Apple does, so no call is refused, and these runs test crashes and faults, not pacing (at the published
    /// rates each night would wait 5 s on its quota alone). The pacing itself is checked by the quota tests
    /// (`RateLimitingTests`, `QuotaTests`) and the Apple job tests at the published rates.
    static let extraYAML = """
        sync: { appleSweepCustomers: 0 }
        recheck: { lead: 400d, lag: 400d }
        limits:
          demo-ios:
            refundHistoryPerSecond: 200
            notificationHistoryPerSecond: 200
            subscriptionStatusPerSecond: 200
            transactionHistoryPerSecond: 200

        """

    /// A database with the scenario's subscriptions imported, as the backend would have loaded them.
    static func stores(_ simulator: StoreSimulator, prefix: String, conninfo: String? = nil) async throws
        -> SimulatedStores
    {
        let stores = try SimulatedStores(
            simulator: simulator, databasePrefix: prefix, extraYAML: extraYAML, conninfo: conninfo)
        let csv = stores.directory.appendingPathComponent("subscriptions.csv")
        try SubscriptionExport.write(simulator.spec, to: csv)
        let imported = try await storerecon(stores, ["import", "subscriptions", csv.path])
        #expect(imported.status == 0, "\(imported.stderr.suffix(1500))")
        return stores
    }

    /// Runs the built binary to completion with the stores' configuration.
    static func storerecon(_ stores: SimulatedStores, _ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await BuiltExecutable("storerecon").run(arguments + ["--config", stores.configPath])
    }

    /// Starts `storerecon run nightly` without waiting.
    static func startNightly(_ stores: SimulatedStores) throws -> (Process, stdout: URL, stderr: URL) {
        try BuiltExecutable("storerecon").start(["run", "nightly", "--config", stores.configPath])
    }

    /// What a process wrote to stderr.
    static func text(_ url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    /// Every reconciled row, as text, in an order that does not depend on insertion order: the refund ledger, the
    /// subscriptions' states and their transitions. Times of checks, run ids and lease columns are left out: they
    /// say when a job ran, not what it found.
    struct Snapshot: Equatable, CustomStringConvertible {
        var refunds: [String]
        var subscriptions: [String]
        var transitions: [String]
        /// Apple customers still queued for a refund-history read.
        var queued: [String]

        var description: String {
            "\(refunds.count) refunds, \(subscriptions.count) subscriptions, \(transitions.count) transitions, "
                + "\(queued.count) queued customers"
        }

        /// The first lines that differ, for a failure message.
        func difference(from other: Snapshot) -> String {
            func diff(_ name: String, _ mine: [String], _ theirs: [String]) -> String {
                let missing = Set(theirs).subtracting(mine).sorted().prefix(3)
                let extra = Set(mine).subtracting(theirs).sorted().prefix(3)
                if missing.isEmpty && extra.isEmpty && mine.count == theirs.count { return "" }
                return "\(name): \(mine.count) vs \(theirs.count); missing \(Array(missing)); extra \(Array(extra))\n"
            }
            return diff("refunds", refunds, other.refunds) + diff("subscriptions", subscriptions, other.subscriptions)
                + diff("transitions", transitions, other.transitions) + diff("queued", queued, other.queued)
        }
    }

    /// A connection of the test itself, named apart from storerecon's own sessions.
    static func connect(_ conninfo: String) throws -> PostgresConnection {
        try PostgresConnection(conninfo: conninfo + " application_name=chaostest")
    }

    static func snapshot(_ conninfo: String) throws -> Snapshot {
        let connection = try connect(conninfo)
        defer { connection.close() }
        func lines(_ sql: String) throws -> [String] {
            try connection.query(sql).map { try $0.decode("line") }
        }
        let refunds = try lines(
            """
            SELECT concat_ws('|', r.app_id, r.platform, r.order_id, r.part_key, r.original_id, s.store_id,
                   r.product_id, r.purchased_at, r.refunded_at, r.reason_code, r.reason_label, r.source_code,
                   r.refund_type, r.quantity, r.percentage_milli, r.price_milli, r.amount_milli, r.currency,
                   r.environment, r.reversed_at IS NOT NULL) AS line
            FROM refund r LEFT JOIN subscription s ON s.id = r.subscription_id
            -- Refunds without revocation (revoked = false) are found by re-reading the orders a recheck learnt on an
            -- earlier run: which of them are known yet depends on how many runs followed a recheck, not on what a
            -- kill or fault cut. TwoNightsReportTests checks them against the scenario's facts.
            WHERE r.revoked
            ORDER BY 1
            """)
        let subscriptions = try lines(
            """
            SELECT concat_ws('|', app_id, store_id, product_id, state, store_state, entitled, expires_at, auto_renew,
                   auto_renew_product_id, current_order_id, linked_store_id, replaced_by_store_id,
                   chain_root_store_id, environment, flagged_at IS NOT NULL, missing_since IS NOT NULL) AS line
            FROM subscription ORDER BY 1
            """)
        let transitions = try lines(
            """
            SELECT concat_ws('|', s.app_id, s.store_id, t.old_state, t.new_state, t.classification, t.old_expires_at,
                   t.new_expires_at, t.old_product_id, t.new_product_id, t.order_id, t.source) AS line
            FROM subscription_transition t JOIN subscription s ON s.id = t.subscription_id ORDER BY 1
            """)
        let queued = try lines(
            """
            SELECT app_id || '|' || original_transaction_id AS line FROM apple_refund_cursor
            WHERE queued_at IS NOT NULL ORDER BY 1
            """)
        return Snapshot(refunds: refunds, subscriptions: subscriptions, transitions: transitions, queued: queued)
    }

    /// No refund is stored that an uninterrupted run would not store. (A stored refund may still lack what a later
    /// page adds, such as its reversal, so refunds are compared by their store key.)
    static func expectNoWrongRefund(
        _ conninfo: String, _ expected: Chaos.Snapshot, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        func keys(_ lines: [String]) -> Set<String> {
            Set(
                lines.map {
                    $0.split(separator: "|", omittingEmptySubsequences: false).prefix(4).joined(separator: "|")
                })
        }
        let stored = keys(try snapshot(conninfo).refunds)
        #expect(
            stored.isSubset(of: keys(expected.refunds)), "a wrong refund was stored", sourceLocation: sourceLocation)
    }

    /// The database equals the reference, with nothing half-written.
    ///
    /// When an attack failed one job and the run went on with the next (the others of the app, the other app), the
    /// later jobs observed the stores before the failed job's work was done, in another order than an uninterrupted
    /// run: a recheck saw a subscription end before the refund that ended it was stored. The transition log, a record
    /// of what was observed when, then differs; the ledger and every subscription's state may not
    /// (`orderedLikeTheReference: false` compares everything but the log).
    static func expectEqual(
        _ conninfo: String, _ expected: Snapshot, orderedLikeTheReference: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var final = try snapshot(conninfo)
        if !orderedLikeTheReference { final.transitions = expected.transitions }
        #expect(final == expected, "\(final.difference(from: expected))", sourceLocation: sourceLocation)
        #expect(try halfWritten(conninfo) == [], sourceLocation: sourceLocation)
    }

    /// Rows that tie each subscription to its history: a subscription's state is the state its latest transition
    /// led to. A transaction cut half-way would leave one without the other.
    static func halfWritten(_ conninfo: String) throws -> [String] {
        let connection = try connect(conninfo)
        defer { connection.close() }
        return try connection.query(
            """
            SELECT s.store_id || ': ' || s.state || ' but last transition to ' || t.new_state AS line
            FROM subscription s
            JOIN LATERAL (SELECT new_state FROM subscription_transition WHERE subscription_id = s.id
                          ORDER BY id DESC LIMIT 1) t ON true
            WHERE t.new_state <> s.state
            ORDER BY 1
            """
        ).map { try $0.decode("line") }
    }

    /// An uninterrupted nightly run on its own database: what every attacked run must end up equal to.
    static func reference(_ simulator: StoreSimulator) async throws -> Snapshot {
        try await timedReference(simulator).snapshot
    }

    /// The reference, and how many seconds its nightly run took.
    static func timedReference(_ simulator: StoreSimulator) async throws -> (snapshot: Snapshot, seconds: Double) {
        let stores = try await stores(simulator, prefix: "chaosref")
        let clock = ContinuousClock()
        let started = clock.now
        let run = try await storerecon(stores, ["run", "nightly"])
        let seconds = (clock.now - started).chaosSeconds
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        let snapshot = try snapshot(stores.conninfo)
        let truth = simulator.groundTruth()
        let apple = truth.appleRefunds.filter { $0.revocationDate <= truth.nowMillis }.count
        #expect(snapshot.refunds.filter { $0.hasPrefix("demo-ios|") }.count == apple)
        #expect(snapshot.refunds.filter { $0.hasPrefix("demo-android|") }.count > 0)
        #expect(snapshot.transitions.contains { $0.hasSuffix("|recheck") })
        #expect(try halfWritten(stores.conninfo).isEmpty)
        return (snapshot, seconds)
    }

    /// Waits until no session of a storerecon process is left on the database (a killed client's backend ends
    /// when the server notices the closed socket), so the next run is not told another process holds a job.
    static func waitForSessionsToEnd(_ conninfo: String) async throws {
        let connection = try connect(conninfo)
        defer { connection.close() }
        for _ in 0..<500 {
            let left: Int = try connection.query(
                """
                SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'storerecon'
                """)[0].decode("n")
            if left == 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("sessions of killed processes are still open after 10 s")
    }
}
