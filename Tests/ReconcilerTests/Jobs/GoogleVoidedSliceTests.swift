import Foundation
import Postgres
import RateLimiting
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

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
            #expect(splits <= 8)
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
        // The jitter lets the daily answer often come back before pages granted just before it: those pages are
        // still stored (a granted call is let finish when its slice is stopped).
        options.latency = Latency(millis: 400, jitterMillis: 150)
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
            // The slices planned (3 or 4: the count follows the token call's time, 0.25 to 0.55 s with this jitter), and
            // any split off a running one once another had finished.
            #expect((3...4).contains(slices.count - (first.counts["slice_splits"] ?? 0)), "\(slices.count) slices")
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

    @Test func aSliceIsHalvedWhenItWouldPageAloneOrReachTheLastQuotaWindowWithPagesToSpare() {
        func wants(
            _ own: Double, _ live: [Double], traveling: Int = 4, splits: Int = 0, stored: Int, burst: Int? = 30
        ) -> Bool {
            GoogleVoidedSync.splitParts(
                own, live: live, traveling: traveling, startCount: 4, splits: splits, stored: stored, burst: burst) > 1
        }
        // Fewer chains travel, but less than two pages left: not for that reason.
        #expect(!wants(1.5, [1.5], traveling: 1, stored: 10))
        // Fewer chains travel than the window started with: halved, up to as many splits as it started with.
        #expect(wants(3, [3, 1], traveling: 2, stored: 10, burst: nil))
        #expect(!wants(3, [3, 1], traveling: 2, splits: 4, stored: 10, burst: nil))
        // All chains travel, no quota window: nothing to spread.
        #expect(!wants(8, [8, 3, 3, 3], stored: 40, burst: nil))
        // 70 stored and 17 left (87 calls): the last window (from the 61st call) holds 27, of which this chain,
        // advancing like the others, holds about 8 × 27 / 17: halved.
        #expect(wants(8, [8, 3, 3, 3], stored: 70))
        // 80 stored and 12 left (92 calls): the last window holds 2, and the 10 calls before it take every chain to
        // 4 pages (the three short ones drain at 2): this chain keeps 2 for the last window, one after the other.
        #expect(wants(6, [6, 2, 2, 2], stored: 80))
        // The same with chains of equal length: 10 calls take each to 2.5 pages, 0.5 left each: kept.
        #expect(!wants(3, [3, 3, 3, 3], stored: 80))
        // The last window full (90 calls) or one call short: a call more would open another window; kept.
        #expect(!wants(4, [4, 2, 2, 2], stored: 80))
        #expect(!wants(4, [4, 2, 2, 1], stored: 80))
        // In the last window with room: every chain with more than a page left is cut, up to 3 × 4 splits.
        #expect(wants(2, [2, 1, 1], stored: 95))
        #expect(!wants(2, [2, 1, 1], splits: 12, stored: 95))
        // All the work within one window: paced by the answer time, not the gate; kept.
        #expect(!wants(6, [6, 2, 2, 2], stored: 10))
    }

    @Test func callsBeforeTheLastWindowTakeEveryChainToOneLevel() {
        #expect(GoogleVoidedSync.pagesBefore([6, 2, 2, 2], filling: 10) == 4)
        #expect(GoogleVoidedSync.pagesBefore([3, 3, 3, 3], filling: 10) == 2.5)
        #expect(GoogleVoidedSync.pagesBefore([1, 5], filling: 0) == 0)
        // More calls than pages: every chain drained, the level is the longest.
        #expect(GoogleVoidedSync.pagesBefore([1, 5], filling: 9) == 5)
        #expect(GoogleVoidedSync.pagesBefore([], filling: 3) == 0)
    }

    @Test func theEstimatedPagesLeftFollowTheRowsStoredSoFar() {
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        var slice = VoidedSlice(number: 0, start: start, end: start.addingTimeInterval(4))
        // 1000 rows in the first second of 4: about 3 pages after the last row seen.
        let last = GoogleVoidedSync.millis(start) + 1_000
        #expect(GoogleVoidedSync.pagesLeft(slice, lastSeen: last, density: 1) == 3)
        // Not yet answered: its span at the given density; nothing known: one page.
        #expect(GoogleVoidedSync.pagesLeft(slice, lastSeen: nil, density: 0.5) == 2)
        #expect(GoogleVoidedSync.pagesLeft(slice, lastSeen: nil, density: nil) == 1)
        slice.drained = true
        #expect(GoogleVoidedSync.pagesLeft(slice, lastSeen: last, density: 1) == 0)
    }
}
