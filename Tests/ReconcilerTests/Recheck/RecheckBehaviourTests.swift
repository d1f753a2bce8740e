import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

@Suite("Recheck: dry run, bad answers, missing subscriptions, concurrent processes")
struct RecheckBehaviourTests {
    static let spec = ScenarioSpec(
        seed: 33, subscriptions: 3000, oneTimePurchases: 0, refunds: 200, historyDays: 200, futureDays: 10)

    static func started(_ spec: ScenarioSpec = spec, _ body: (RecheckHarness) async throws -> Void) async throws {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try RecheckHarness(simulator, prefix: "recheck_cases")
            try harness.insertStarted(simulator.subscriptionTruth())
            try await body(harness)
        }
    }

    @Test func dryRunPrintsTheTransitionsAndWritesNothing() async throws {
        try await Self.started { harness in
            let before = try harness.rows()
            let lines = Lines()
            let results = try await harness.recheck(dryRun: true, output: lines.append)
            let selected = results.values.reduce(0) { $0 + ($1.counts["selected"] ?? 0) }
            #expect(selected > 0)
            #expect(results.values.allSatisfy { $0.exitCode == 0 })
            // Every due row is new, so each would get one transition (plus one per token it replaced), one line each.
            let transitions = results.values.reduce(0) { total, result in
                total + result.counts.filter { $0.key.hasPrefix("transition.") }.values.reduce(0, +)
            }
            #expect(lines.all.count == transitions)
            #expect(lines.all.count >= selected)
            #expect(lines.all.allSatisfy { $0.hasPrefix("would record: ") && $0.contains("unknown -> ") })
            #expect(try harness.rows() == before)
            #expect(try harness.transitions().isEmpty)
            let runs = try harness.jobs.connection().query("SELECT count(*) AS n FROM job_run")
            #expect(try runs[0].decode("n", as: Int.self) == 0)
        }
    }

    @Test(arguments: [
        (SimulatorEndpoint.appleSubscriptionStatuses, FaultKind.badSignature),
        (.appleSubscriptionStatuses, .malformedJSON),
        (.googleSubscriptionsV2, .wrongFieldTypes),
        (.googleSubscriptionsV2, .malformedJSON),
    ])
    func badAnswersAreReportedAndLeaveTheStateUnchanged(endpoint: SimulatorEndpoint, fault: FaultKind) async throws {
        try await Self.started { harness in
            let simulator = harness.simulator
            simulator.setFaults(FaultSettings(rates: [fault: 1]), for: endpoint)
            let before = try harness.rows()
            let results = try await harness.recheck()
            let platform: AppConfig.Platform = endpoint == .googleSubscriptionsV2 ? .google : .apple
            let spoiled = try #require(results[harness.stores.app(platform).id])
            #expect(spoiled.exitCode == 1)
            #expect((spoiled.counts["bad_answers"] ?? 0) == (spoiled.counts["asked"] ?? -1))
            #expect((spoiled.counts["asked"] ?? 0) > 0)
            let other = try #require(results[harness.stores.app(platform == .apple ? .google : .apple).id])
            #expect(other.exitCode == 0, "the other app is not disturbed")
            let after = try harness.rows()
            let held = try harness.jobs.connection().query(
                "SELECT count(*) AS n FROM subscription WHERE app_id = $1 AND claimed_until IS NOT NULL", [spoiled.app])
            #expect(
                try held[0].decode("n", as: Int.self) == spoiled.counts["asked"] ?? -1,
                "unusable answers keep their lease")
            for (storeId, row) in before where row.app == spoiled.app {
                #expect(after[storeId] == row, "an unusable answer changes nothing")
            }
            // The same run never asks twice; once the lease runs out the next run stores the answers.
            simulator.clearFaults()
            let again = try await harness.recheck()
            #expect(again[spoiled.app]?.counts["asked"] ?? 0 == 0)
            simulator.clock.advance(millis: 16 * 60_000)
            let later = try await harness.recheck()
            #expect(later[spoiled.app]?.exitCode == 0)
            // Everything spoiled is asked again (16 minutes later a few more expiries may have come within the lead).
            #expect(later[spoiled.app]?.counts["asked"] ?? 0 >= spoiled.counts["asked"] ?? 0)
            let leased = try harness.jobs.connection().query(
                """
                SELECT count(*) FILTER (WHERE claimed_until IS NOT NULL) AS leased,
                       count(*) FILTER (WHERE last_checked_at IS NOT NULL) AS checked
                FROM subscription WHERE app_id = $1
                """, [spoiled.app])[0]
            #expect(try leased.decode("leased", as: Int.self) == 0, "no lease is left behind")
            #expect(try leased.decode("checked", as: Int.self) >= spoiled.counts["asked"] ?? 0)
        }
    }

    @Test func subscriptionsTheStoresDoNotKnowAreMarkedMissingNotDeleted() async throws {
        try await Self.started { harness in
            let now = harness.stores.now()
            let connection = try harness.jobs.connection()
            for (app, storeId) in [
                (harness.stores.app(.apple).id, "1999"),
                (harness.stores.app(.google).id, "notAToken.AO-J1Ozzzz"),
            ] {
                try connection.execute(
                    """
                    INSERT INTO subscription (app_id, store_id, product_id, expires_at, expiry_changed_at)
                    VALUES ($1, $2, 'com.example.basic.monthly', $3, $3)
                    """, [app, storeId, now.addingTimeInterval(3600)])
            }
            // A dry run says what it would do, never that it did it.
            let dry = Lines()
            _ = try await harness.recheck(dryRun: true, logger: dry.logger, output: dry.append)
            #expect(dry.all.filter { $0.hasPrefix("would record: ") && $0.contains("-> missing") }.count == 2)
            #expect(!dry.all.contains { $0.contains("marked") }, "\(dry.all)")
            #expect(try harness.rows().values.allSatisfy { $0.state != "missing" })
            harness.simulator.resetStatistics()
            let results = try await harness.recheck()
            #expect(results.values.allSatisfy { $0.exitCode == 0 && $0.counts["missing"] == 1 })
            let rows = try harness.rows()
            for storeId in ["1999", "notAToken.AO-J1Ozzzz"] {
                let row = try #require(rows[storeId])
                #expect(row.state == "missing" && !row.entitled)
                #expect(try harness.transitions().contains { $0.subscriptionId == row.id && $0.kind == "missing" })
            }
            let missingSince = try connection.query(
                "SELECT count(*) AS n FROM subscription WHERE missing_since IS NOT NULL")
            #expect(try missingSince[0].decode("n", as: Int.self) == 2)
            // Apple: production, then sandbox, before calling it missing.
            let apple = harness.simulator.statistics().filter {
                $0.endpoint == .appleSubscriptionStatuses
            }
            #expect(Set(apple.compactMap(\.environment)) == ["production", "sandbox"])
        }
    }

    @Test func concurrentRunsSplitTheWorkAndNeverAskTwice() async throws {
        try await Self.started { harness in
            harness.simulator.resetStatistics()
            let configuration = harness.stores.configuration
            let app = harness.stores.app(.google)
            let counters = [JobCounters(), JobCounters()]
            let conninfo = harness.stores.conninfo
            let gate = harness.jobs.gate
            let now = harness.stores.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for counter in counters {
                    group.addTask {
                        let connection = try PostgresConnection(conninfo: conninfo)
                        defer { connection.close() }
                        var logger = Logger(label: "test")
                        logger.logLevel = .warning
                        let environment = JobEnvironment(
                            connection: connection, gate: CountingQuotaGate(base: gate, counters: counter),
                            counters: counter, runId: nil, shutdown: ShutdownSignal(), dryRun: false, logger: logger,
                            progress: nil, now: now)
                        try await RecheckHarness.body(app: app, configuration: configuration)(environment)
                    }
                }
                try await group.waitForAll()
            }
            let selected = counters[0]["selected"]
            #expect(selected > 100)
            #expect(counters[1]["selected"] == selected, "both processes list the same due set")
            #expect(counters[0]["asked"] + counters[1]["asked"] == selected)
            #expect(counters[0]["asked"] > 0 && counters[1]["asked"] > 0, "the work is split")
            #expect(harness.statusCalls()[app.id] == selected)
            let firsts = try harness.transitions().filter {
                $0.kind == "first_seen" || $0.kind == "upgrade" || $0.kind == "downgrade"
            }
            #expect(Set(firsts.map(\.subscriptionId)).count == firsts.count, "one first answer per subscription")
        }
    }

    @Test func aFlaggedSubscriptionIsAskedWhateverItsExpiryAndTheFlagIsCleared() async throws {
        try await Self.started { harness in
            let connection = try harness.jobs.connection()
            let app = harness.stores.app(.google).id
            let far = harness.stores.now().addingTimeInterval(200 * 86_400)
            let flagged = try connection.query(
                """
                UPDATE subscription SET flagged_at = $3, flag_reason = 'google_voided'
                WHERE id = (SELECT id FROM subscription WHERE app_id = $1 AND expires_at > $2 ORDER BY id LIMIT 1)
                RETURNING store_id
                """, [app, far, harness.stores.now()])
            let storeId: String = try flagged[0].decode("store_id")
            _ = try await harness.recheck()
            let row = try connection.query(
                "SELECT flagged_at IS NULL AS cleared, last_checked_at IS NOT NULL AS checked FROM subscription WHERE store_id = $1",
                [storeId])[0]
            #expect(try row.decode("cleared", as: Bool.self) && row.decode("checked", as: Bool.self))
        }
    }
}
