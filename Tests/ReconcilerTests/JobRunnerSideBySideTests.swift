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

    @Test func withOwnGatesEachAppAsksAGateOfItsOwn() async throws {
        try await Self.withApps { harness, apps in
            let made = Mutex(0)
            let conninfo = harness.stores.conninfo
            let results = await harness.runner().runSideBySide(
                job: "own_gates", apps: apps, concurrency: 4,
                ownGates: {
                    made.withLock { $0 += 1 }
                    return PostgresQuotaGate(conninfo: conninfo, clock: ContinuousClock())
                }
            ) { app, environment in
                _ = try await environment.gate.acquire(app: app.id, api: .appleConsumption, purpose: .incremental)
            }
            #expect(results.allSatisfy { $0.outcome == .ok }, "\(results.map { $0.error ?? "" })")
            #expect(made.withLock { $0 } == apps.count)
            // Every grant was recorded in the shared database, whichever gate made it.
            let rows = try harness.connection().query(
                "SELECT count(DISTINCT app_id)::int AS n FROM quota_day WHERE api = 'apple.consumption' AND used > 0")
            #expect(try rows[0].decode("n", as: Int.self) == apps.count)
        }
    }
}
