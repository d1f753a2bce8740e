import Foundation
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// A stop signal ends any wait at the quota gate at once (issue 27): a window's wait or a store's stored block,
/// with no store call after it and exit 75.
@Suite("SIGTERM while waiting at the quota gate")
struct QuotaGateSignalTests {
    enum Wait: String, CaseIterable {
        /// The window (1 call in 10 minutes) is spent.
        case window
        /// A store's throttling answer blocks the API for 170 s.
        case storedBlock
    }

    @Test(arguments: Wait.allCases)
    func aSignalEndsTheWaitAndTakesNoGrant(_ wait: Wait) async throws {
        let conninfo = try TestDatabase.create(prefix: "qsig")
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        let api = StoreAPI.googleVoidedPurchases
        let window = QuotaLimit(windows: [RateLimit(1, per: .seconds(600))])
        let base = PostgresQuotaGate(
            conninfo: conninfo, policy: QuotaPolicy(defaultLimits: QuotaLimits([api: window])))
        let shutdown = ShutdownSignal()
        let gate = StoppableQuotaGate(base: base, shutdown: shutdown)
        switch wait {
        case .window: try await gate.acquire(app: "a", api: api, purpose: .incremental)
        case .storedBlock: await gate.report(app: "a", api: api, feedback: .throttled(retryAfter: 170))
        }
        let failure = await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                do {
                    try await gate.acquire(app: "a", api: api, purpose: .incremental)
                    return nil
                } catch {
                    return error
                }
            }
            // Signal only once the gate has answered "wait": the test is about ending a wait.
            while base.statistics.waits == 0 { try? await Task.sleep(for: .milliseconds(5)) }
            shutdown.request()
            return await group.next() ?? nil
        }
        let error = try #require(failure as? ReconcilerError, "\(String(describing: failure))")
        #expect(ExitStatus.classify(error).0 == 75)
        let used = try await base.usageToday(app: "a").first { $0.api == api }?.used
        #expect(used == (wait == .window ? 1 : 0), "no grant after the signal")
        // Once stopped, the gate grants nothing more.
        await #expect(throws: ReconcilerError.self) {
            try await gate.acquire(app: "a", api: .googleSubscriptions, purpose: .incremental)
        }
    }

    /// The built binary, blocked by a store's throttling answer: SIGTERM ends it with 75, no voided call is made, the
    /// metrics file is written, and with `--log-format json` every stderr line is one JSON object, the stop notice
    /// included.
    @Test func theBinaryStopsAtOnceWithMetricsAndJSONLogs() async throws {
        let spec = ScenarioSpec(
            seed: 27, anchorMillis: SimulatorClock.wallMillis(), subscriptions: 20, oneTimePurchases: 20, refunds: 10,
            historyDays: 5, futureDays: 0,
            apps: [SimulatedApp(id: "demo-android", platform: .google, storeId: "com.example.demo")])
        var options = JobHarness.options(spec)
        options.clock = .realTime(offsetMillis: 0)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "qsigbin")
            let app = stores.app(.google).id
            let blocker = PostgresQuotaGate(conninfo: stores.conninfo)
            await blocker.report(app: app, api: .googleVoidedPurchases, feedback: .throttled(retryAfter: 170))
            let metrics = stores.directory.appendingPathComponent("storerecon.prom")
            let (process, _, stderr) = try BuiltExecutable("storerecon").start([
                "sync", "google-voided", "--log-format", "json", "--metrics-file", metrics.path,
                "--config", stores.configPath,
            ])
            // The run is recorded before its first store call: from then on it is at (or on its way to) the gate.
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            while process.isRunning,
                try connection.query("SELECT count(*) AS n FROM job_run")[0].decode("n", as: Int.self) == 0
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(process.isRunning, "the run ended before the signal: \(Self.text(stderr))")
            kill(process.processIdentifier, SIGTERM)
            // A guard against a hang (the block lasts 170 s), not a measure of speed.
            for _ in 0..<3000 where process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("still waiting a minute after SIGTERM")
            }
            try await process.exited()
            let log = Self.text(stderr)
            #expect(process.terminationStatus == 75, "\(log)")
            #expect(JobHarness(stores: stores).voidedGranted == 0, "a store call went out after the signal")
            let written = try String(contentsOf: metrics, encoding: .utf8)
            #expect(written.contains("storerecon_run_exit_code{command=\"sync google-voided\"} 75"), "\(written)")
            let lines = log.split(separator: "\n")
            let objects = lines.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(objects.count == lines.count, "a stderr line is not JSON: \(log)")
            #expect(
                objects.contains {
                    ($0["message"] as? String)?.hasPrefix("stopping after the page in hand") == true
                        && $0["signal"] as? String == "SIGTERM"
                }, "\(log)")
        }
    }

    static func text(_ url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }
}
