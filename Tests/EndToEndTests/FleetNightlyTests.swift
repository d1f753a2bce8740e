import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// `storerecon run nightly` for a fleet: three Google and three Apple apps served by one simulator, run by one
/// process. The first app of each store misbehaves (its store hangs, or refuses its credentials); the others' nights
/// must end, with exact ledgers, while that store still hangs, and their store calls must overlap in time.
@Suite("run nightly with a fleet of apps side by side")
struct FleetNightlyTests {
    static let apps: [SimulatedApp] = [
        SimulatedApp(id: "fleet-android-1", platform: .google, storeId: "com.example.fleet1"),
        SimulatedApp(id: "fleet-ios-1", platform: .apple, storeId: "com.example.fleetios1", appAppleId: 1_000_000_001),
        SimulatedApp(id: "fleet-android-2", platform: .google, storeId: "com.example.fleet2"),
        SimulatedApp(id: "fleet-ios-2", platform: .apple, storeId: "com.example.fleetios2", appAppleId: 1_000_000_002),
        SimulatedApp(id: "fleet-android-3", platform: .google, storeId: "com.example.fleet3"),
        SimulatedApp(id: "fleet-ios-3", platform: .apple, storeId: "com.example.fleetios3", appAppleId: 1_000_000_003),
    ]
    /// Its store stops answering (listed first, so a run that took the apps in turn would never reach the others).
    static let hung = "fleet-android-1"
    /// Its store refuses its key.
    static let refused = "fleet-ios-1"
    static let healthy = ["fleet-android-2", "fleet-ios-2", "fleet-android-3", "fleet-ios-3"]

    /// The scenario ends two hours before the wall clock and nothing happens after it, so the truth does not move
    /// while the test runs and no event sits near the edges of Google's window (30 days back, a minute of skew).
    /// Every answer takes 100 ms and each app asks one call at a time, so each app's night spans many answers.
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 52, anchorMillis: now - 2 * 3_600_000, subscriptions: 1200, oneTimePurchases: 300,
                refunds: 240, historyDays: 25, futureDays: 0, sandboxShare: 0, apps: apps))
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        options.quotas.appleRefundHistoryPerSecond = 1000
        options.latency = Latency(millis: 100)
        return options
    }

    static let extra = """
        sync: { appleSweepCustomers: 0, appleConcurrency: 1 }
        recheck: { concurrency: 1 }

        """

    /// Writes the subscriptions the app backend knows, and imports them (the recheck asks about those near expiry).
    func importSubscriptions(_ stores: SimulatedStores) async throws {
        let csv = stores.directory.appendingPathComponent("subscriptions.csv")
        try SubscriptionExport.write(stores.simulator.spec, to: csv)
        let imported = try await BuiltExecutable("storerecon").run(
            ["import", "subscriptions", csv.path, "--config", stores.configPath])
        #expect(imported.status == 0, "\(imported.stderr.suffix(1500))")
    }

    /// The outcome of each job of each app that ran (`app job` → outcome; nil while running).
    func outcomes(_ connection: PostgresConnection) throws -> [String: String?] {
        var outcomes: [String: String?] = [:]
        for row in try connection.query("SELECT app_id, job, outcome FROM job_run WHERE app_id IS NOT NULL") {
            let key = "\(try row.decode("app_id", as: String.self)) \(try row.decode("job", as: String.self))"
            outcomes[key] = try row.decodeIfPresent("outcome", as: String.self)
        }
        return outcomes
    }

    /// The last job of an app's night.
    static func lastJob(_ app: String) -> String { app.contains("android") ? "google_orders" : "recheck" }

    /// Refund rows of an app: for Google the revoked ones (the voided list's), by order id; for Apple all of them,
    /// by transaction id.
    func ledger(_ connection: PostgresConnection, app: String) throws -> [String] {
        try connection.query(
            "SELECT order_id FROM refund WHERE app_id = $1 AND (platform = 'apple' OR revoked) ORDER BY 1", [app]
        ).map { try $0.decode("order_id") }
    }

    /// What the stores hold for an app, written the same way (the scenario does not move after its anchor).
    func truth(_ simulator: StoreSimulator, app: String) -> [String] {
        let truth = simulator.groundTruth()
        if app.contains("ios") {
            return truth.appleRefunds.filter { $0.app == app && $0.revocationDate <= truth.nowMillis }
                .map(\.transactionId).sorted()
        }
        return truth.googleVoids.filter { $0.app == app && $0.recorded && $0.recordedTimeMillis <= truth.nowMillis }
            .map(\.orderId).sorted()
    }

    /// The healthy apps' store calls overlap: some instant lies within every app's span of granted calls.
    static func expectOverlappingSpans(_ simulator: StoreSimulator) {
        let statistics = simulator.statistics()
        let spans = Self.healthy.map { app in
            let mine = statistics.filter { $0.app == app }
            return (
                mine.compactMap(\.firstGrantMillis).min() ?? .max, mine.compactMap(\.lastGrantMillis).max() ?? 0
            )
        }
        #expect(spans.map(\.0).max()! < spans.map(\.1).min()!, "spans of granted calls: \(spans)")
    }

    /// Every job line names its app, every app ends with one summary line, and the metrics give each job's exit code.
    static func expectSummaries(_ log: String, metrics: String) throws {
        let lines = log.split(separator: "\n")
        #expect(lines.filter { $0.contains(" job=") && !$0.contains(" app=") }.isEmpty)
        for app in Self.apps.map(\.id) {
            let summaries = lines.filter { $0.contains("app=\(app) ") && $0.contains("msg=\"night ") }
            #expect(summaries.count == 1, "\(app): \(summaries)")
        }
        let prom = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prom.contains("storerecon_job_exit_code{job=\"apple_refunds\",app=\"\(Self.refused)\"} 78"))
        #expect(prom.contains("storerecon_job_exit_code{job=\"google_orders\",app=\"fleet-android-2\"} 0"))
    }

    @Test func appsRunSideBySideAndAHungOrRefusedStoreHoldsUpNoOther() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "fleet", extraYAML: Self.extra)
            try await importSubscriptions(stores)
            simulator.setFault(.hang, app: Self.hung)
            simulator.setFault(.unauthorized, app: Self.refused)
            defer { simulator.setFault(nil, app: Self.hung) }
            let metrics = stores.directory.appendingPathComponent("storerecon.prom").path
            let (process, _, errors) = try BuiltExecutable("storerecon").start(
                ["run", "nightly", "--metrics-file", metrics, "--config", stores.configPath])
            let connection = try PostgresConnection(conninfo: stores.conninfo)

            // Every healthy app's night ends while the hung app's store still holds its first call. (The bound only
            // keeps a broken build from waiting for ever: a run that took the apps in turn never gets here.)
            let bound = ContinuousClock.now.advanced(by: .seconds(300))
            func healthyDone() throws -> Bool {
                let outcomes = try outcomes(connection)
                return Self.healthy.allSatisfy { outcomes["\($0) \(Self.lastJob($0))"] ?? nil != nil }
            }
            while try !healthyDone(), process.isRunning, ContinuousClock.now < bound {
                try await Task.sleep(for: .milliseconds(100))
            }
            let whileHung = try outcomes(connection)
            let log = { Chaos.text(errors) }
            #expect(process.isRunning, "\(log().suffix(2000))")
            // The hung app has ended no job well (its calls are held; the transport's own timeout may end a job 75).
            #expect(whileHung.filter { $0.key.hasPrefix("\(Self.hung) ") && $0.value == "ok" }.isEmpty, "\(whileHung)")
            #expect(try ledger(connection, app: Self.hung).isEmpty)
            for app in Self.healthy {
                let jobs =
                    app.contains("android")
                    ? ["google_voided", "recheck", "google_orders"] : ["apple_refunds", "recheck"]
                for job in jobs {
                    #expect(whileHung["\(app) \(job)"] == "ok", "\(app) \(job): \(whileHung)")
                }
                #expect(try ledger(connection, app: app) == truth(simulator, app: app), "\(app)")
            }
            #expect(whileHung["\(Self.refused) apple_refunds"] == "config", "\(whileHung)")
            #expect(try ledger(connection, app: Self.refused).isEmpty)

            Self.expectOverlappingSpans(simulator)

            // The store answers again: the run ends with the worst outcome (the refused key), and the hung app's
            // next night catches up.
            simulator.setFault(nil, app: Self.hung)
            await BuiltExecutable.waitForExit(process)
            #expect(process.terminationStatus == 78, "\(log().suffix(2000))")
            let rerun = try await BuiltExecutable("storerecon").run(
                ["run", "nightly", "--app", Self.hung, "--config", stores.configPath])
            #expect(rerun.status == 0, "\(rerun.stderr.suffix(2000))")
            #expect(try ledger(connection, app: Self.hung) == truth(simulator, app: Self.hung))

            try Self.expectSummaries(log(), metrics: metrics)
            try refundsWithoutRevocationOfTheNight(simulator, connection)
        }
    }

    /// Issue 27, item 12: the refunds Google made without revoking them, of the current orders the recheck learnt,
    /// are in the ledger after the first night (the known orders are re-read after the recheck, not before it).
    func refundsWithoutRevocationOfTheNight(_ simulator: StoreSimulator, _ connection: PostgresConnection) throws {
        let current = Set(
            try connection.query(
                "SELECT current_order_id FROM subscription WHERE current_order_id IS NOT NULL AND last_checked_at IS NOT NULL"
            ).map { try $0.decode("current_order_id", as: String.self) })
        let truth = simulator.groundTruth()
        let expected = Set(
            truth.googleRefundsWithoutRevocation.filter {
                $0.isLatestOrder && current.contains($0.orderId) && $0.refundMillis <= truth.nowMillis
            }.map(\.orderId))
        #expect(!expected.isEmpty, "the scenario has refunds without revocation of rechecked subscriptions")
        let stored = Set(
            try connection.query("SELECT order_id FROM refund WHERE platform = 'google' AND NOT revoked")
                .map { try $0.decode("order_id", as: String.self) })
        #expect(expected.subtracting(stored).isEmpty, "missing \(expected.subtracting(stored).sorted().prefix(5))")
    }

    @Test func anAppPastItsDeadlineStopsAndLeavesTheRestOfItsNight() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "fleetdeadline",
                extraYAML: Self.extra + "nightly: { appTimeout: 5s }\n")
            simulator.setFault(.hang, app: Self.hung)
            defer { simulator.setFault(nil, app: Self.hung) }
            let metrics = stores.directory.appendingPathComponent("storerecon.prom").path
            let (process, _, errors) = try BuiltExecutable("storerecon").start(
                ["run", "nightly", "--app", Self.hung, "--metrics-file", metrics, "--config", stores.configPath])
            // The store answers again once the deadline has passed: the call in hand is let finish (the store counts
            // it), and nothing after it starts. (Left hung, the call would end at the transport's 30-s timeout.)
            while process.isRunning && !Chaos.text(errors).contains("nightly.appTimeout (5s) passed") {
                try await Task.sleep(for: .milliseconds(50))
            }
            simulator.setFault(nil, app: Self.hung)
            await BuiltExecutable.waitForExit(process)
            let outcome = (status: process.terminationStatus, stderr: Chaos.text(errors))
            #expect(outcome.status == 75, "\(outcome.stderr.suffix(2000))")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            let runs = try connection.query("SELECT job, outcome, error FROM job_run WHERE app_id = $1", [Self.hung])
            #expect(runs.count == 1)
            #expect(try runs.first?.decode("job", as: String.self) == "google_voided")
            #expect(try runs.first?.decode("outcome", as: String.self) == "partial")
            #expect(
                try runs.first?.decodeIfPresent("error", as: String.self)?.contains("nightly.appTimeout (5s)") == true)
            for job in ["recheck", "google_orders"] {
                #expect(
                    outcome.stderr.split(separator: "\n").contains {
                        $0.contains("job=\(job) ") && $0.contains("not started: the app's night passed")
                    }, "\(job)")
            }
            let prom = try String(contentsOfFile: metrics, encoding: .utf8)
            #expect(prom.contains("storerecon_job_exit_code{job=\"recheck\",app=\"\(Self.hung)\"} 75"))

            let status = try await BuiltExecutable("storerecon").run(
                ["status", "--app", Self.hung, "--config", stores.configPath])
            #expect(status.stdout.contains("night: partial, "), "\(status.stdout)")
            #expect(status.stdout.contains("never run: recheck, google_orders"), "\(status.stdout)")

            let rerun = try await BuiltExecutable("storerecon").run(
                ["run", "nightly", "--app", Self.hung, "--config", stores.configPath])
            #expect(rerun.status == 0, "\(rerun.stderr.suffix(2000))")
            #expect(try ledger(connection, app: Self.hung) == truth(simulator, app: Self.hung))
        }
    }
}
