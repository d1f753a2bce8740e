import Foundation
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// A window paged as several time slices at once, against the simulator answering every call after 200 ms (the real
/// stores take a second or more; a fifth keeps the tests quick): the ledger equals the store's truth, more than one
/// call is in flight, a kill leaves every slice resumable, and a quota answer in one slice stops them all.
@Suite("Google voided sync: time slices in flight at once at store latency")
struct GoogleVoidedSliceTests {
    /// About 23 pages, all recorded between 28 and 1 days before the anchor.
    static func spec(anchor: Int64 = 1_767_225_600_000) -> ScenarioSpec {
        ScenarioSpec(
            seed: 41, anchorMillis: anchor, subscriptions: 16_000, oneTimePurchases: 12_000, refunds: 21_000,
            historyDays: 22, futureDays: 0, lateVoidShare: 0,
            apps: [SimulatedApp(id: "demo-android", platform: .google, storeId: "com.example.demo")])
    }

    static let sliced = """
        sync: { googleSlices: 4 }

        """

    static func options(_ spec: ScenarioSpec = spec()) -> SimulatorOptions {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        options.latency = Latency(millis: 200, jitterMillis: 40)
        return options
    }

    @Test func aSlicedBackfillLandsExactlyWithSeveralCallsInFlight() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "gvslice", extraYAML: Self.sliced)
            let harness = JobHarness(stores: stores)
            let now = stores.now()
            let since = now.addingTimeInterval(-26 * 86_400)
            let until = now.addingTimeInterval(-2 * 86_400)
            let expected = harness.truthVoids(recordedFrom: since, to: until)
            let pages = JobHarness.pages(expected.count)
            try #require(pages >= 12)

            let result = try await harness.googleVoided(.backfill(since: since, until: until))
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            #expect(simulator.mostInFlight(.googleVoidedPurchases) > 1, "the slices were paged one call at a time")
            // Each of the 4 slices ends on a page of its own: at most 3 calls more than one chain would make; a slice
            // split off a running one when others had finished costs at most 2 more (its own last page, and the page
            // of the old chain that reads past its new end).
            let calls = harness.voidedGranted
            let splits = result.counts["slice_splits"] ?? 0
            #expect(splits <= 4)
            #expect(
                calls >= pages && calls <= pages + 3 + 2 * splits, "\(calls) calls for \(pages) pages, \(splits) splits"
            )
            let checkpoint = try harness.checkpoint(GoogleVoidedSync.backfillJob)
            #expect(checkpoint.highWater == until && !checkpoint.inFlight)
            #expect(checkpoint.callMillis.map { $0 >= 150 } == true, "call time \(checkpoint.callMillis ?? -1) ms")
            let left = try VoidedSlice.load(
                job: GoogleVoidedSync.backfillJob, app: stores.app(.google).id, on: harness.connection())
            #expect(left.isEmpty, "a drained window keeps no slices")
        }
    }

    @Test func theDailyAnswerInOneSliceStopsThemAllAndTheNextRunFinishesExactly() async throws {
        var options = Self.options()
        options.quotas.voidedPerDay = 6
        // Under the published 30 per 30 s a slice is worth it from 0.1 s a call: 0.4 s makes the 4 slices configured.
        options.latency = Latency(millis: 400, jitterMillis: 20)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "gvslicedaily", extraYAML: Self.sliced)
            let harness = JobHarness(stores: stores, policy: QuotaPolicy())
            let expected = harness.firstWindowTruth(now: stores.now())
            let pages = JobHarness.pages(expected.count)

            let first = try await harness.googleVoided()
            #expect(first.exitCode == 75, "\(first.error ?? "")")
            #expect(first.error?.contains("daily quota") == true, "\(first.error ?? "")")
            #expect(harness.voidedGranted == 6)
            // Every page the store granted was stored with its slice's next token, in the same transaction.
            let app = stores.app(.google).id
            let slices = try VoidedSlice.load(job: GoogleVoidedSync.job, app: app, on: harness.connection())
            // The 4 slices planned, and any split off a running one once another had finished.
            #expect(slices.count == 4 + (first.counts["slice_splits"] ?? 0))
            #expect(slices.map(\.pagesDone).reduce(0, +) == 6)
            let checkpoint = try harness.checkpoint()
            #expect(checkpoint.inFlight && checkpoint.pagesDone == 6)
            let stored = try harness.storedVoids()
            #expect(Int64(stored.count) == slices.map(\.rowsDone).reduce(0, +))
            #expect(stored.isSubset(of: expected))

            // The next Pacific day: every slice goes on from its stored token.
            simulator.quotas.voidedPerDay = 1_000_000
            try harness.connection().execute("UPDATE quota_day SET exhausted_at = NULL, used = 0, refused = 0")
            let second = try await harness.googleVoided()
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            #expect(try harness.checkpoint().highWater != nil && !harness.checkpoint().inFlight)
            // No page asked twice: the refused calls were never granted and each slice resumed from its token.
            let splits = (first.counts["slice_splits"] ?? 0) + (second.counts["slice_splits"] ?? 0)
            #expect(
                harness.voidedGranted <= pages + 3 + 2 * splits,
                "\(harness.voidedGranted) calls for \(pages) pages, \(splits) splits")
        }
    }
}
