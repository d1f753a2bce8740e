import Foundation
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// `backfill google-voided --since/--until`: an explicit window lands exactly, an interrupted backfill resumes
/// without fetching finished pages again (also when `--since` is older than Google keeps and each run clamps it
/// afresh), and a backfill stops at its share of the daily cap while the incremental sync still gets the rest.
// One test at a time: each runs its own simulator on the shared cooperative pool beside the job and its blocking
// database calls, and a dozen at once starve the simulators on a small machine (sign-ins time out).
@Suite("Google voided backfill: explicit window, resume, share of the daily budget", .serialized)
struct GoogleVoidedBackfillTests {
    /// About 10 pages in 30 days.
    static let spec = ScenarioSpec(
        seed: 53, subscriptions: 10_000, oneTimePurchases: 10_000, refunds: 19_000, historyDays: 30, futureDays: 2)

    static var options: SimulatorOptions {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        return options
    }

    @Test func anExplicitWindowLandsExactlyAndLeavesTheSyncCheckpointAlone() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvbackfill"))
            let now = harness.stores.now()
            let since = now.addingTimeInterval(-20 * 86_400)
            let until = now.addingTimeInterval(-5 * 86_400)
            let expected = harness.truthVoids(recordedFrom: since, to: until)
            let result = try await harness.googleVoided(.backfill(since: since, until: until))
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            #expect(result.calls["google.voidedpurchases"] == JobHarness.pages(expected.count))
            #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).highWater == until)
            #expect(try harness.checkpoint().highWater == nil)
        }
    }

    @Test(arguments: [20, 45])
    func aStoppedBackfillResumesWithoutFetchingFinishedPagesAgain(daysBack: Int) async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvbfresume"))
            let now = harness.stores.now()
            let since = now.addingTimeInterval(-Double(daysBack) * 86_400)
            // At 45 days back the window is clamped to the 30 days Google keeps.
            let plan = VoidedWindowPlanner(overlap: 3600, skew: 60).backfill(since: since, until: nil, now: now)
            let expected = harness.truthVoids(recordedFrom: plan.start, to: plan.end)
            let pages = JobHarness.pages(expected.count)
            try #require(pages >= 5)
            let shutdown = ShutdownSignal()
            let stopping = ScriptedTransport { call in if call == 3 { shutdown.request() } }
            let first = try await harness.googleVoided(
                .backfill(since: since, until: nil), transport: stopping, shutdown: shutdown)
            #expect(first.exitCode == 75)
            #expect(first.error?.contains("stopped by signal") == true)
            #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).pagesDone == 3)

            // The operator runs the same command again a minute later.
            simulator.clock.advance(millis: 60_000)
            let resumed = ScriptedTransport { _ in }
            let second = try await harness.googleVoided(.backfill(since: since, until: nil), transport: resumed)
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            #expect(resumed.voidedCalls == pages - 3, "finished pages were fetched again")
            #expect(try harness.storedVoids() == expected)
            #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).highWater == plan.end)
        }
    }

    /// A `--since` older than Google's 30 days is clamped with a warning: no gap is recorded (the sync lost nothing),
    /// so `status` does not report one every day after (issue 27).
    @Test func aSinceOlderThanThirtyDaysIsClampedWithoutAGap() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvbfclamp"))
            let now = harness.stores.now()
            let since = now.addingTimeInterval(-45 * 86_400)
            let until = now.addingTimeInterval(-20 * 86_400)
            let result = try await harness.googleVoided(.backfill(since: since, until: until))
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.counts["since_clamped"] == 1)
            let gaps = try harness.connection().query("SELECT count(*) AS n FROM sync_gap")[0].decode("n", as: Int.self)
            #expect(gaps == 0)
            let oldest = VoidedWindowPlanner.oldestStart(now: now)
            #expect(try harness.storedVoids() == harness.truthVoids(recordedFrom: oldest, to: until))
        }
    }

    /// A stopped backfill resumed after its page token expired and its start left the 30 days: the slice restarts
    /// from what Google still keeps, with a warning; no gap is recorded (the sync lost nothing).
    @Test func aBackfillRestartedPastTheThirtyDaysRecordsNoGap() async throws {
        var options = Self.options
        options.voidedPageTokenLifetimeSeconds = 86_400
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvbfrestart"))
            let since = harness.stores.now().addingTimeInterval(-29 * 86_400)
            let shutdown = ShutdownSignal()
            let stopping = ScriptedTransport { call in if call == 3 { shutdown.request() } }
            let first = try await harness.googleVoided(
                .backfill(since: since, until: nil), transport: stopping, shutdown: shutdown)
            #expect(first.exitCode == 75)

            simulator.clock.advance(millis: 2 * 86_400_000)
            let second = try await harness.googleVoided(
                .backfill(since: since, until: nil), transport: ScriptedTransport { _ in })
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            #expect(second.counts["token_restarts"] == 1)
            #expect((second.counts["since_clamped"] ?? 0) >= 1)
            let gaps = try harness.connection().query("SELECT count(*) AS n FROM sync_gap")[0].decode("n", as: Int.self)
            #expect(gaps == 0)
        }
    }

    @Test func aBackfillStopsAtItsShareOfTheDailyCapAndTheSyncGetsTheRest() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "gvbfshare")
            let app = stores.app(.google)
            let limits = QuotaLimits.published.overriding(.googleVoidedPurchases, dailyCap: 10)
            let harness = JobHarness(
                stores: stores, policy: QuotaPolicy(appLimits: [app.id: limits], backfillShare: 0.5))
            let now = stores.now()
            let since = now.addingTimeInterval(-29 * 86_400)
            let until = now.addingTimeInterval(-86_400)
            try #require(JobHarness.pages(harness.truthVoids(recordedFrom: since, to: until).count) > 5)

            let backfill = try await harness.googleVoided(.backfill(since: since, until: until))
            #expect(backfill.exitCode == 75)
            #expect(backfill.outcome == .partial)
            #expect(
                backfill.error?.contains("backfills used their 5 of the 10 calls") == true, "\(backfill.error ?? "")")
            #expect(harness.voidedGranted == 5)
            #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).pagesDone == 5)
            #expect(
                try harness.storedVoids()
                    == harness.truthPages(recordedFrom: since, to: until, pages: 5))

            // Tonight's sync still has the other half: its window (two days) takes far fewer calls.
            var checkpoint = try harness.checkpoint()
            checkpoint.highWater = now.addingTimeInterval(-2 * 86_400)
            try checkpoint.save(on: harness.connection())
            let sync = try await harness.googleVoided()
            #expect(sync.exitCode == 0, "\(sync.error ?? "")")
            let syncPages = sync.calls["google.voidedpurchases"] ?? 0
            #expect(syncPages >= 1)

            // Another backfill today gets nothing more.
            let again = try await harness.googleVoided(.backfill(since: since, until: until))
            #expect(again.exitCode == 75)
            #expect(harness.voidedGranted == 5 + syncPages)
            let day = try harness.connection().query(
                "SELECT used, used_backfill FROM quota_day WHERE app_id = $1 AND api = 'google.voidedpurchases'",
                [app.id])
            #expect(try day[0].decode("used", as: Int.self) == 5 + syncPages)
            #expect(try day[0].decode("used_backfill", as: Int.self) == 5)
        }
    }

    /// A stopped backfill and a new command line with other bounds: an older `--since` (clamped to what Google keeps,
    /// as the stopped one's start is not) and no `--until`. The new run reads its own window, not the rest of the
    /// stopped one (it resumed that one, logged "resuming" and exited 0 with most of what was asked unread).
    @Test func aBackfillWithOtherBoundsStartsItsOwnWindow() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvbfother"))
            let now = harness.stores.now()
            let (since, until) = (now.addingTimeInterval(-20 * 86_400), now.addingTimeInterval(-5 * 86_400))
            let shutdown = ShutdownSignal()
            let stopping = ScriptedTransport { call in if call == 3 { shutdown.request() } }
            let first = try await harness.googleVoided(
                .backfill(since: since, until: until), transport: stopping, shutdown: shutdown)
            #expect(first.exitCode == 75)
            let stopped = try harness.checkpoint(GoogleVoidedSync.backfillJob)
            #expect(stopped.inFlight && stopped.pagesDone == 3, "\(stopped)")

            simulator.clock.advance(millis: 60_000)
            let wider = now.addingTimeInterval(-45 * 86_400)
            let plan = VoidedWindowPlanner(overlap: 3600, skew: 60).backfill(
                since: wider, until: nil, now: harness.stores.now())
            let second = try await harness.googleVoided(.backfill(since: wider, until: nil))
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).highWater == plan.end)
            #expect(try harness.storedVoids() == harness.truthVoids(recordedFrom: plan.start, to: plan.end))
        }
    }
}
