import Foundation
import Postgres
import RateLimiting
import StoreSimulator
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// `JobRunner.runSideBySide` (`run refund-requests`): one job for many apps at once, within a number of connections,
/// with bodies that stand in for the store work (they only wait for each other), on a real database.
@Suite("JobRunner: one job for many apps side by side")
struct JobRunnerSideBySideTests {
    /// Four apps (two per store) and a runner over a fresh database.
    static func withApps(_ body: (JobHarness, [AppConfig]) async throws -> Void) async throws {
        let apps = (1...2).flatMap { index in
            [
                SimulatedApp(
                    id: "ios-\(index)", platform: .apple, storeId: "com.example.ios\(index)",
                    appAppleId: 1_000_000 + Int64(index)),
                SimulatedApp(id: "android-\(index)", platform: .google, storeId: "com.example.android\(index)"),
            ]
        }
        let spec = ScenarioSpec(seed: 5, subscriptions: 8, apps: apps)
        try await StoreSimulator.withRunning(JobHarness.options(spec)) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "sidebyside")
            try await body(JobHarness(stores: stores), stores.configuration.apps)
        }
    }

    @Test(.timeLimit(.minutes(1))) func twoAppsRunAtOnceAndNeverMoreThanTheConcurrency() async throws {
        try await Self.withApps { harness, apps in
            let inside = Mutex((now: 0, most: 0, arrived: 0))
            let recorded = Mutex<[String]>([])
            // Each body waits until a second one has arrived in its pair: run one at a time, the first would wait
            // for ever (the suite's time limit ends it).
            let results = await harness.runner().runSideBySide(
                job: "side_by_side", apps: apps, concurrency: 2,
                record: { result in
                    recorded.withLock { $0.append(result.app) }
                }
            ) { app, _ in
                let pair = inside.withLock { state in
                    state.now += 1
                    state.most = max(state.most, state.now)
                    state.arrived += 1
                    return (state.arrived + 1) / 2
                }
                while inside.withLock({ $0.arrived }) < 2 * pair { try await Task.sleep(for: .milliseconds(5)) }
                inside.withLock { $0.now -= 1 }
                if app.id == apps[1].id { throw ReconcilerError(.failed, "this app's store refused") }
            }
            #expect(results.map(\.app) == apps.map(\.id))
            #expect(inside.withLock { $0.most } == 2)
            #expect(recorded.withLock { Set($0) } == Set(apps.map(\.id)))
            // One app's failure is its own: the others ran to the end.
            #expect(results.map(\.exitCode) == [0, 1, 0, 0])
            let rows = try harness.connection().query(
                "SELECT app_id, outcome FROM job_run WHERE job = 'side_by_side' ORDER BY app_id")
            #expect(rows.count == 4)
        }
    }

    @Test func theAppsShareTheGatesInTurnAndHandOnTheirConnections() async throws {
        try await Self.withApps { harness, apps in
            let gates = (0..<2).map { _ in
                PostgresQuotaGate(conninfo: harness.stores.conninfo, clock: ContinuousClock())
            }
            let backends = Mutex<[Int32]>([])
            let results = await harness.runner().runSideBySide(
                job: "shared_gates", apps: apps, concurrency: 2, gates: gates
            ) { app, environment in
                backends.withLock { $0.append(environment.connection.backendPID) }
                _ = try await environment.gate.acquire(app: app.id, api: .appleConsumption, purpose: .incremental)
            }
            for gate in gates { await gate.close() }
            #expect(results.allSatisfy { $0.outcome == .ok }, "\(results.map { $0.error ?? "" })")
            // Four apps, two at a time: the two connections opened first served the other two apps.
            #expect(backends.withLock { $0.count } == apps.count)
            #expect(Set(backends.withLock { $0 }).count <= 2)
            // Started in turn on two gates: two apps' grants on each.
            #expect(gates.map(\.statistics.grants) == [2, 2])
            // Every grant was recorded in the shared database, whichever gate made it.
            let rows = try harness.connection().query(
                "SELECT count(DISTINCT app_id)::int AS n FROM quota_day WHERE api = 'apple.consumption' AND used > 0")
            #expect(try rows[0].decode("n", as: Int.self) == apps.count)
        }
    }

    @Test func aConnectionHandedOnCarriesNoLockSettingOrTransaction() async throws {
        try await Self.withApps { harness, apps in
            let seen = Mutex<[String: (pid: Int32, idle: Bool, locks: Int, timeout: String, zone: String)]>([:])
            let defaultTimeout = try harness.connection().query("SHOW statement_timeout")[0]
                .decode("statement_timeout", as: String.self)
            // One at a time: the first app leaves a session lock and a setting, the second a transaction that an
            // error left open; each next app must start on a clean session.
            let results = await harness.runner().runSideBySide(
                job: "handed_on", apps: Array(apps.prefix(3)), concurrency: 1
            ) { app, environment in
                let connection = environment.connection
                let state = try connection.query(
                    """
                    SELECT (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())
                             AS locks,
                           current_setting('statement_timeout') AS timeout, current_setting('TimeZone') AS zone
                    """)[0]
                let entry = (
                    pid: connection.backendPID, idle: connection.isIdle, locks: try state.decode("locks", as: Int.self),
                    timeout: try state.decode("timeout", as: String.self),
                    zone: try state.decode("zone", as: String.self)
                )
                seen.withLock { $0[app.id] = entry }
                switch app.id {
                case apps[0].id:
                    try connection.execute("SET statement_timeout = '4321s'")
                    try connection.query("SELECT pg_advisory_lock(4242)")
                case apps[1].id:
                    try connection.execute("BEGIN")
                    try connection.query("SELECT pg_advisory_xact_lock(4242)")
                    throw ReconcilerError(.failed, "this app's job failed mid-transaction")
                default: break
                }
            }
            #expect(results.map(\.exitCode) == [0, 1, 0])
            let byApp = seen.withLock { $0 }
            let (first, second, third) = try (
                #require(byApp[apps[0].id]), #require(byApp[apps[1].id]), #require(byApp[apps[2].id])
            )
            // The second app ran on the first one's connection, with only its own job lock and the defaults.
            #expect(second.pid == first.pid)
            #expect(second.locks == 1 && second.timeout == defaultTimeout && second.zone == "UTC")
            // The transaction left open was not handed on: the third app got a fresh, idle session.
            #expect(third.pid != second.pid)
            #expect(third.idle && third.locks == 1 && third.timeout == defaultTimeout && third.zone == "UTC")
            #expect(first.idle && second.idle)
        }
    }

    /// A job whose work is done but whose run record cannot be written is not reported as a success: its run row
    /// would say `started`, and `status` would call the job unfinished without a line saying why.
    @Test func aRunRecordThatCannotBeWrittenFailsTheJobWithALine() async throws {
        try await Self.withApps { harness, apps in
            let result = try await harness.runner().run(job: "unrecorded", app: apps[0], waitForLock: false) { _ in
                // As if the database refused the record (a constraint, a lost connection) once the work was stored.
                try harness.connection().execute(
                    "ALTER TABLE job_run ADD CONSTRAINT test_no_ok CHECK (job <> 'unrecorded' OR outcome <> 'ok')")
            }
            #expect(result.exitCode != 0)
            #expect(result.error?.contains("test_no_ok") == true, "\(result.error ?? "")")
        }
    }
}
