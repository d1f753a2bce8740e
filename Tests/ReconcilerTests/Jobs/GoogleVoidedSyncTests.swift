import Foundation
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

@Suite("Google voided sync against the store simulator and a real database")
struct GoogleVoidedSyncTests {
    static let spec = ScenarioSpec(
        seed: 11, subscriptions: 8000, oneTimePurchases: 6000, refunds: 8000, historyDays: 30, futureDays: 5)

    @Test func aBacklogLandsExactlyAndARerunChangesNothing() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvoid"))
            let first = try await harness.googleVoided()
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            let now = harness.stores.now()
            let expected = harness.truthVoids(
                recordedFrom: VoidedWindowPlanner.oldestStart(now: now), to: now.addingTimeInterval(-60))
            #expect(expected.count > 1000, "the scenario should have a real backlog")
            #expect(expected.contains { $0.partKey != "" }, "the scenario should have partial refunds")
            let stored = try harness.storedVoids()
            #expect(stored == expected)
            #expect(first.counts["inserted"] == expected.count)
            #expect(first.calls["google.voidedpurchases"] == (expected.count + 999) / 1000)

            let second = try await harness.googleVoided()
            #expect(second.exitCode == 0)
            #expect(second.counts["inserted"] ?? 0 == 0)
            #expect(second.counts["updated"] ?? 0 == 0)
            #expect(try harness.storedVoids() == stored)
        }
    }

    @Test func theNextDayCatchesNewAndLateRecordedVoidsWithoutDuplicates() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvoidday"))
            let firstNow = harness.stores.now()
            #expect(try await harness.googleVoided().exitCode == 0)
            simulator.clock.advance(millis: 86_400_000)
            let secondNow = harness.stores.now()
            let result = try await harness.googleVoided()
            #expect(result.exitCode == 0)
            let expected = harness.truthVoids(
                recordedFrom: VoidedWindowPlanner.oldestStart(now: firstNow), to: secondNow.addingTimeInterval(-60))
            #expect(try harness.storedVoids() == expected)
            // A void recorded during the new day for a purchase voided days earlier was caught.
            let late = expected.filter {
                Double($0.voidedMillis) / 1000 < firstNow.timeIntervalSince1970 - 86_400
            }
            let lateRecordedToday = harness.stores.simulator.groundTruth().googleVoids.filter {
                $0.recordedTimeMillis > Int64(firstNow.timeIntervalSince1970 * 1000)
                    && $0.voidedTimeMillis < Int64(firstNow.timeIntervalSince1970 * 1000) - 86_400_000
            }
            #expect(!late.isEmpty)
            for void in lateRecordedToday
            where void.recordedTimeMillis < Int64(secondNow.timeIntervalSince1970 * 1000) - 60_000 {
                #expect(expected.contains { $0.orderId == void.orderId })
            }
            // Only the new day's pages were fetched: one window of about a day plus the overlap.
            #expect((result.calls["google.voidedpurchases"] ?? 0) <= 2)
        }
    }

    @Test func aCheckpointOlderThanThirtyDaysIsAGap() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvoidgap"))
            let app = harness.stores.app(.google)
            let old = harness.stores.now().addingTimeInterval(-40 * 86_400)
            var checkpoint = try SyncCheckpoint.load(job: GoogleVoidedSync.job, app: app.id, on: harness.connection())
            checkpoint.highWater = old
            try checkpoint.save(on: harness.connection())
            #expect(try await harness.googleVoided().exitCode == 0)
            let gaps = try harness.connection().query(
                "SELECT gap_from, gap_to FROM sync_gap WHERE app_id = $1", [app.id])
            #expect(gaps.count == 1)
            #expect(try gaps[0].decode("gap_from", as: Date.self) == old)
            let status = try await StatusReport.gather(harness.stores.configuration, on: harness.connection())
            #expect(status.attention.contains { $0.contains("gap") })
        }
    }

    @Test func dryRunFetchesButWritesNothing() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvoiddry"))
            let result = try await harness.googleVoided(dryRun: true)
            #expect(result.exitCode == 0)
            #expect((result.counts["would_insert"] ?? 0) > 1000)
            #expect(try harness.storedVoids().isEmpty)
            let checkpoints = try harness.connection().query("SELECT count(*) AS n FROM sync_checkpoint")
            #expect(try checkpoints[0].decode("n", as: Int.self) == 0)
        }
    }
}
