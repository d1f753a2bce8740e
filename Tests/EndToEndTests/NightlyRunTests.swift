import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// The built `storerecon` binary run as cron would, against the store simulator on loopback and a real database.
@Suite("storerecon run nightly, end to end")
struct NightlyRunTests {
    /// The scenario's refunds end two hours before the wall clock, so the truth hardly moves while a test runs (only
    /// its late events can still land: a reversal or a final partial void hours or days after its refund).
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 41, anchorMillis: now - 2 * 3_600_000, subscriptions: 4000, oneTimePurchases: 1000, refunds: 600,
                historyDays: 25, futureDays: 0, sandboxShare: 0))
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        options.quotas.appleRefundHistoryPerSecond = 1000
        return options
    }

    /// Get Refund History asked at 200 a second, which a simulator with `appleRefundHistoryPerSecond = 1000` allows:
    /// at the published 10 a second each night of these scenarios would wait half a minute on its quota alone. The
    /// end-to-end tests are about what a night stores; the pacing has tests of its own (`RateLimitingTests`,
    /// `QuotaTests`).
    static let fastAppleRefunds = "limits: { demo-ios: { refundHistoryPerSecond: 200 } }\n"

    static let extra = "sync: { appleSweepCustomers: 0 }\n" + fastAppleRefunds

    func run(_ stores: SimulatedStores, _ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await BuiltExecutable("storerecon").run(arguments + ["--config", stores.configPath])
    }

    /// The ledger as rows of text, for comparing whole databases.
    func ledger(_ stores: SimulatedStores) throws -> [String] {
        try PostgresConnection(conninfo: stores.conninfo).query(
            """
            SELECT app_id || '|' || order_id || '|' || part_key || '|' || refund_type || '|' || quantity || '|'
                   || coalesce(amount_milli::text, '-') || '|' || (reversed_at IS NOT NULL) AS line
            FROM refund ORDER BY 1
            """
        ).map { try $0.decode("line") }
    }

    func truthCounts(_ simulator: StoreSimulator) -> (apple: Int, google: Int) {
        let truth = simulator.groundTruth()
        let apple = truth.appleRefunds.filter { $0.revocationDate <= truth.nowMillis }.count
        let oldest = truth.nowMillis - 30 * 86_400_000 + 600_000
        let google = truth.googleVoids.filter {
            $0.recorded && $0.recordedTimeMillis >= oldest && $0.recordedTimeMillis <= truth.nowMillis - 60_000
        }.count
        return (apple, google)
    }

    @Test func aNightlyRunLandsTheScenarioAndASecondChangesNothing() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "nightly", extraYAML: Self.extra)
            let metrics = stores.directory.appendingPathComponent("storerecon.prom").path
            let first = try await run(stores, ["run", "nightly", "--metrics-file", metrics])
            #expect(first.status == 0, "\(first.stderr.suffix(2000))")
            let rows = try ledger(stores)
            let expected = truthCounts(simulator)
            #expect(rows.filter { $0.hasPrefix("demo-ios|") }.count == expected.apple)
            #expect(rows.filter { $0.hasPrefix("demo-android|") }.count == expected.google)
            // Every job ends with one summary line of its counts and calls, the Apple refund job too.
            for job in ["apple_refunds", "google_voided", "recheck"] {
                let summary = first.stderr.split(separator: "\n").first {
                    $0.contains("job=\(job) ") && $0.contains("msg=\"done in ")
                }
                #expect(summary != nil, "\(job): \(first.stderr.suffix(2000))")
                if job != "recheck" { #expect(summary?.contains("; calls ") == true, "\(job): \(summary ?? "")") }
            }
            let prom = try String(contentsOfFile: metrics, encoding: .utf8)
            #expect(prom.contains("storerecon_job_exit_code{job=\"google_voided\",app=\"demo-android\"} 0"))
            #expect(prom.contains("storerecon_job_last_success_timestamp_seconds{job=\"apple_refunds\""))
            let second = try await run(stores, ["run", "nightly"])
            #expect(second.status == 0)
            #expect(try ledger(stores) == rows)
            let runs = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT count(*) AS n FROM job_run WHERE outcome = 'ok'")[0].decode("n", as: Int.self)
            #expect(runs == 10)  // two nights x (Apple: refund job + recheck; Google: voided, recheck, known orders)
            let status = try await run(stores, ["status", "--format", "json"])
            #expect(status.status == 0, "\(status.stdout)")
        }
    }

    @Test func sigtermMidRunThenARerunEqualsAnUninterruptedRun() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let reference = try SimulatedStores(simulator: simulator, databasePrefix: "nightref", extraYAML: Self.extra)
            #expect(try await run(reference, ["run", "nightly"]).status == 0)
            let expected = try ledger(reference)

            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "nightterm", extraYAML: Self.extra)
            let (process, _, errors) = try BuiltExecutable("storerecon").start(
                ["run", "nightly", "--config", stores.configPath])
            if try await Self.waitForAJob(stores.conninfo, process: process) {
                kill(process.processIdentifier, SIGTERM)
            }
            await BuiltExecutable.waitForExit(process)
            let log = Chaos.text(errors)
            #expect([0, 75].contains(process.terminationStatus), "\(log.suffix(1500))")
            let rerun = try await run(stores, ["run", "nightly"])
            #expect(rerun.status == 0, "\(rerun.stderr.suffix(1500))")
            #expect(try ledger(stores) == expected)
        }
    }

    /// Waits until the run has started a job (its signal handlers are in place by then), so the SIGTERM cuts work in
    /// progress rather than the process's start. Returns false when the run ended first.
    static func waitForAJob(_ conninfo: String, process: Process) async throws -> Bool {
        let watcher = try PostgresConnection(conninfo: conninfo)
        defer { watcher.close() }
        while process.isRunning {
            let started = try watcher.query("SELECT count(*)::int AS n FROM job_run")[0].decode("n", as: Int.self)
            if started > 0 { return process.isRunning }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test func twoNightlyRunsStartedTogetherStoreEverythingOnce() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "nighttwo", extraYAML: Self.extra)
            let binary = try BuiltExecutable("storerecon")
            let first = try binary.start(["run", "nightly", "--config", stores.configPath])
            let second = try binary.start(["run", "nightly", "--config", stores.configPath])
            await BuiltExecutable.waitForExit(first.0)
            await BuiltExecutable.waitForExit(second.0)
            #expect(first.0.terminationStatus == 0)
            #expect(second.0.terminationStatus == 0)
            let lines = try ledger(stores)
            #expect(Set(lines).count == lines.count)
            let expected = truthCounts(simulator)
            #expect(lines.count == expected.apple + expected.google)
            let skippedOrOk = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT count(*) AS n FROM job_run WHERE outcome = 'ok'")[0].decode("n", as: Int.self)
            #expect(skippedOrOk >= 2)
        }
    }

    @Test func statusExitsOneOnAGap() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "nightgap", extraYAML: Self.extra)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            try connection.execute(
                """
                INSERT INTO sync_checkpoint (job, app_id, high_water) VALUES ('google_voided', 'demo-android',
                now() - interval '45 days')
                """)
            _ = try await run(stores, ["sync", "google-voided"])
            let status = try await run(stores, ["status"])
            #expect(status.status == 1)
            // The gap's id is printed, and `gaps acknowledge ID` replaces the Runbook's SQL (issue 27).
            let line = try #require(status.stdout.split(separator: "\n").first { $0.contains("GAP #") })
            let id = try #require(line.split(separator: "#").last?.split(separator: " ").first.map(String.init))
            let acknowledged = try await run(stores, ["gaps", "acknowledge", id])
            #expect(acknowledged.status == 0, "\(acknowledged.stderr)")
            #expect(acknowledged.stdout.contains("gap #\(id) (google_voided, demo-android) acknowledged"))
            #expect(!(try await run(stores, ["status"]).stdout.contains("GAP #")))
            let again = try await run(stores, ["gaps", "acknowledge", id])
            #expect(again.status == 1)
            #expect(again.stderr.contains("no open gap has that id"))
        }
    }
}
