import Foundation
import Postgres
import StoreSimulator
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// The nightly run's scheduling of apps, with jobs that stand in for the store work (they only wait for each other),
/// on a real database: runs recorded in `job_run` by the real runner.
@Suite("NightlyFleet: apps side by side")
struct NightlyFleetTests {
    /// Two apps (the default scenario's) and a runner over a fresh database.
    static func withFleet(
        appTimeout: String = "1h", _ body: (JobHarness, [AppConfig]) async throws -> Void
    ) async throws {
        try await StoreSimulator.withRunning(JobHarness.options(ScenarioSpec(seed: 3, subscriptions: 10))) {
            simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "fleet", extraYAML: "nightly: { appTimeout: \(appTimeout) }\n")
            try await body(JobHarness(stores: stores), stores.configuration.apps)
        }
    }

    /// A job whose body is `body`.
    static func job(_ name: String, connections: Int = 1, _ body: @escaping @Sendable (AppConfig) async throws -> Void)
        -> NightlyPlan.Job
    {
        NightlyPlan.Job(name: name, connections: connections) { app, _, _ in try await body(app) }
    }

    @Test func everyAppStartsAtOnce() async throws {
        try await Self.withFleet { harness, apps in
            let started = Mutex<Set<String>>([])
            // Each app's job waits until every app's job has started: run in turn, the first would wait for ever
            // (until its deadline, an hour away).
            let plan: @Sendable (AppConfig) -> [NightlyPlan.Job] = { _ in
                [
                    Self.job("wait_for_all") { app in
                        started.withLock { _ = $0.insert(app.id) }
                        while started.withLock({ $0.count }) < apps.count {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                    }
                ]
            }
            let fleet = NightlyFleet(runner: harness.runner(), budget: ConnectionBudget(total: 8), plan: plan)
            let results = await fleet.run(apps: apps)
            #expect(results.map(\.app) == apps.map(\.id))
            #expect(results.allSatisfy { $0.outcome == .ok }, "\(results.map { "\($0.app) \($0.error ?? "")" })")
        }
    }

    @Test func theConnectionBudgetKeepsJobsApartWhenTheyDoNotFitTogether() async throws {
        try await Self.withFleet { harness, apps in
            let inside = Mutex((now: 0, most: 0))
            let plan: @Sendable (AppConfig) -> [NightlyPlan.Job] = { _ in
                [
                    Self.job("big", connections: 2) { _ in
                        inside.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        try await Task.sleep(for: .milliseconds(50))
                        inside.withLock { $0.now -= 1 }
                    }
                ]
            }
            let budget = ConnectionBudget(total: 3)
            let results = await NightlyFleet(runner: harness.runner(), budget: budget, plan: plan).run(apps: apps)
            #expect(results.allSatisfy { $0.outcome == .ok })
            // Two jobs of two connections do not fit in three: one waited for the other.
            #expect(inside.withLock { $0.most } == 1)
            #expect(budget.peak == 2)
        }
    }

    @Test func anAppPastItsDeadlineIsStoppedAndTheOthersFinish() async throws {
        // Long enough for the healthy app's two jobs on a loaded host; the slow app waits until it is stopped.
        try await Self.withFleet(appTimeout: "5s") { harness, apps in
            let slow = apps[0].id
            let ran = Mutex<[String]>([])
            let plan: @Sendable (AppConfig) -> [NightlyPlan.Job] = { _ in
                [
                    Self.job("first") { app in
                        ran.withLock { $0.append("\(app.id) first") }
                        // The slow app's store never answers: only the cancellation ends this wait.
                        if app.id == slow { try await Task.sleep(for: .seconds(3600)) }
                    },
                    Self.job("second") { app in ran.withLock { $0.append("\(app.id) second") } },
                ]
            }
            let results = await NightlyFleet(runner: harness.runner(), budget: ConnectionBudget(total: 4), plan: plan)
                .run(apps: apps)
            let byKey = Dictionary(uniqueKeysWithValues: results.map { ("\($0.app) \($0.job)", $0) })
            let other = apps[1].id
            #expect(byKey["\(other) first"]?.outcome == .ok)
            #expect(byKey["\(other) second"]?.outcome == .ok)
            #expect(byKey["\(slow) first"]?.exitCode == 75)
            #expect(byKey["\(slow) first"]?.error?.contains("nightly.appTimeout (5s)") == true)
            #expect(byKey["\(slow) second"]?.exitCode == 75)
            #expect(!ran.withLock { $0 }.contains("\(slow) second"))
            // The stopped job's own record says why; the job never started has none.
            let rows = try harness.connection().query(
                "SELECT job, outcome, error FROM job_run WHERE app_id = $1 ORDER BY id", [slow])
            #expect(rows.count == 1)
            #expect(try rows.first?.decode("outcome", as: String.self) == "partial")
            #expect(try rows.first?.decodeIfPresent("error", as: String.self)?.contains("nightly.appTimeout") == true)
        }
    }

    @Test func theDefaultConcurrencyIsHalfTheFreeConnectionsAtMost16PerCore() throws {
        #expect(NightlyFleet.defaultConcurrency(freeConnections: 95, cores: 2) == 32)
        #expect(NightlyFleet.defaultConcurrency(freeConnections: 40, cores: 2) == 20)
        #expect(NightlyFleet.defaultConcurrency(freeConnections: 1, cores: 8) == 1)
        // Each waiting connection holds one of libdispatch's 255 overcommitting threads: 200 at most, on any host.
        #expect(NightlyFleet.defaultConcurrency(freeConnections: 2000, cores: 64) == 200)
        let defaults = try ConfigurationLoader(environment: [:]).load(text: "apps: []\n", source: "t.yaml")
        #expect(defaults.nightly.concurrency == nil)
        #expect(defaults.nightly.appTimeout == .hours(6))
        let set = try ConfigurationLoader(environment: [:])
            .load(text: "nightly: { concurrency: 12, appTimeout: 90m, onLocked: wait }\n", source: "t.yaml")
        #expect(set.nightly == NightlyConfig(onLocked: .wait, concurrency: 12, appTimeout: .seconds(5400)))
    }

    @Test func aNightIsTheLatestRunOfEachOfItsJobs() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func run(_ job: String, _ offset: Double, _ length: Double?, _ outcome: String?) -> StatusReport.LastRun {
            StatusReport.LastRun(
                job: job, startedAt: start.addingTimeInterval(offset),
                finishedAt: length.map { start.addingTimeInterval(offset + $0) }, outcome: outcome, error: nil)
        }
        let jobs = ["google_voided", "recheck", "google_orders"]
        let done = StatusReport.night(
            of: [
                run("google_voided", 0, 60, "ok"), run("recheck", 60, 30, "partial"), run("backfill", 0, 1, "failed"),
            ],
            jobs: jobs)
        #expect(done?.startedAt == start)
        #expect(done?.finishedAt == start.addingTimeInterval(90))
        #expect(done?.outcome == "partial")
        #expect(done?.neverRun == ["google_orders"])
        let running = StatusReport.night(
            of: [run("google_voided", 0, nil, nil), run("recheck", -86_400, 5, "ok")], jobs: jobs)
        #expect(running?.startedAt == start)
        #expect(running?.finishedAt == nil)
        #expect(running?.running == ["google_voided"])
        #expect(StatusReport.night(of: [], jobs: jobs) == nil)
        // Running for 7 h past a 6 h deadline: the process died or hangs; at 5 h it may still be working.
        let late = StatusReport.lateNight(
            running, app: "a", timeout: .hours(6), now: start.addingTimeInterval(7 * 3600))
        #expect(late?.hasPrefix("a: google_voided started 7 h ago and has not ended") == true, "\(late ?? "")")
        #expect(
            StatusReport.lateNight(running, app: "a", timeout: .hours(6), now: start.addingTimeInterval(5 * 3600))
                == nil)
        #expect(
            StatusReport.lateNight(done, app: "a", timeout: .hours(6), now: start.addingTimeInterval(9 * 3600)) == nil)
    }
}
