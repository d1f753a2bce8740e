import Foundation
import Reconciler
import StoreSimulator
import TestSupport
import Testing

extension GoogleVoidedFaultTests {
    /// A window stopped before two of its slices asked for their first page, resumed two days later: those slices
    /// start before what Google keeps (which refuses such a `startTime`), so they start at the oldest time it keeps,
    /// and what it no longer keeps is a gap.
    @Test func unstartedSlicesOfAWindowResumedPastTheThirtyDaysStartAtWhatGoogleKeeps() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvunstarted"))
            let firstNow = harness.stores.now()
            let firstStart = VoidedWindowPlanner.oldestStart(now: firstNow)
            let firstEnd = firstNow.addingTimeInterval(-60)
            let app = harness.stores.app(.google).id
            let connection = try harness.connection()
            // As a run stopped at once leaves it: the window and its two slices saved, no page asked for.
            let slices = VoidedSlice.split(start: firstStart, end: firstEnd, count: 2)
            try VoidedSlice.replace(slices, job: GoogleVoidedSync.job, app: app, on: connection)
            var checkpoint = try harness.checkpoint()
            (checkpoint.windowStart, checkpoint.windowEnd) = (firstStart, firstEnd)
            try checkpoint.save(on: connection)

            simulator.clock.advance(millis: 2 * 86_400_000)
            let oldest = VoidedWindowPlanner.oldestStart(now: harness.stores.now())
            let resumed = try await harness.googleVoided(transport: ScriptedTransport { _ in })
            #expect(resumed.exitCode == 0, "\(resumed.error ?? "")")
            #expect(try harness.storedVoids() == harness.truthVoids(recordedFrom: oldest, to: firstEnd))
            #expect(try harness.checkpoint().highWater == firstEnd)
            let gaps = try connection.query("SELECT gap_from, gap_to FROM sync_gap")
            #expect(gaps.count == 1)
            #expect(try gaps.first?.decode("gap_from", as: Date.self) == firstStart)
            #expect(try gaps.first?.decode("gap_to", as: Date.self) == oldest)
        }
    }

    /// The same resumed window, planned from a checkpoint with an overlap before it: the overlap was read by the
    /// runs before, so the gap starts at the checkpoint, not at the window's start.
    @Test func aResumedWindowsGapStartsAtTheCheckpointNotAtItsOverlap() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvunstartedhw"))
            let firstStart = VoidedWindowPlanner.oldestStart(now: harness.stores.now())
            let highWater = firstStart.addingTimeInterval(2 * 3600)
            let firstEnd = harness.stores.now().addingTimeInterval(-60)
            let connection = try harness.connection()
            let slices = VoidedSlice.split(start: firstStart, end: firstEnd, count: 2)
            try VoidedSlice.replace(
                slices, job: GoogleVoidedSync.job, app: harness.stores.app(.google).id, on: connection)
            var checkpoint = try harness.checkpoint()
            (checkpoint.highWater, checkpoint.windowStart, checkpoint.windowEnd) = (highWater, firstStart, firstEnd)
            try checkpoint.save(on: connection)

            simulator.clock.advance(millis: 86_400_000)
            let oldest = VoidedWindowPlanner.oldestStart(now: harness.stores.now())
            let resumed = try await harness.googleVoided(transport: ScriptedTransport { _ in })
            #expect(resumed.exitCode == 0, "\(resumed.error ?? "")")
            let gaps = try connection.query("SELECT gap_from, gap_to FROM sync_gap")
            #expect(gaps.count == 1)
            #expect(try gaps.first?.decode("gap_from", as: Date.self) == highWater)
            #expect(try gaps.first?.decode("gap_to", as: Date.self) == oldest)
        }
    }

    /// A window planned from a checkpoint, stopped after three pages and resumed two days later: its token has
    /// expired and its start left what Google keeps. The overlap before the checkpoint was read by the runs before,
    /// so the gap of the restarted slice starts at the checkpoint, as when a window is planned or resumed unstarted.
    @Test func aRestartedSlicesGapStartsAtTheCheckpointNotAtItsOverlap() async throws {
        var options = Self.options
        options.voidedPageTokenLifetimeSeconds = 86_400
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvstalehw"))
            let highWater = VoidedWindowPlanner.oldestStart(now: harness.stores.now()).addingTimeInterval(2 * 3600)
            var checkpoint = try harness.checkpoint()
            checkpoint.highWater = highWater
            try checkpoint.save(on: harness.connection())
            let shutdown = ShutdownSignal()
            let stopping = ScriptedTransport { call in if call == 3 { shutdown.request() } }
            let first = try await harness.googleVoided(transport: stopping, shutdown: shutdown)
            #expect(first.exitCode == 75)
            #expect(try harness.checkpoint().windowStart == highWater.addingTimeInterval(-3600))

            simulator.clock.advance(millis: 2 * 86_400_000)
            let oldest = VoidedWindowPlanner.oldestStart(now: harness.stores.now())
            let second = try await harness.googleVoided(transport: ScriptedTransport { _ in })
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            #expect(second.counts["token_restarts"] == 1)
            let gaps = try harness.connection().query("SELECT gap_from, gap_to FROM sync_gap")
            #expect(gaps.count == 1)
            #expect(try gaps.first?.decode("gap_from", as: Date.self) == highWater)
            #expect(try gaps.first?.decode("gap_to", as: Date.self) == oldest)
        }
    }
}
