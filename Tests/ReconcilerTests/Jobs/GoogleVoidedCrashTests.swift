import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// The built `storerecon` binary, run as cron would against the simulator on loopback, killed with `SIGKILL` at
/// random moments and run again: the ledger must end equal to an uninterrupted run's, and each kill may cost at most
/// the page in flight.
///
/// The binary takes `now` from the wall clock, so the simulator follows the wall clock too. The scenario keeps every
/// void well inside the 30 days and well before now (no late-recorded voids), so runs started seconds apart ask for
/// windows that hold exactly the same rows.
@Suite("storerecon sync and backfill google-voided: SIGKILL and SIGTERM, then run again")
struct GoogleVoidedCrashTests {
    /// About 23 pages, all recorded between 28 and 1 days ago.
    static func spec() -> ScenarioSpec {
        let now = SimulatorClock.wallMillis() / 1000 * 1000
        return ScenarioSpec(
            seed: 31, anchorMillis: now - 6 * 86_400_000, subscriptions: 16_000, oneTimePurchases: 12_000,
            refunds: 21_000, historyDays: 22, futureDays: 0, lateVoidShare: 0,
            apps: [SimulatedApp(id: "demo-android", platform: .google, storeId: "com.example.demo")])
    }

    static func options() -> SimulatorOptions {
        var options = SimulatorOptions(scenario: spec())
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        JobHarness.unlimited(&options)
        // Each page answers after 250 ms, so a run takes several seconds and a kill lands mid-run.
        options.faults[.googleVoidedPurchases] = FaultSettings(rates: [.slow: 1], slowMillis: 250)
        return options
    }

    /// Limits lifted on storerecon's side too (the published 30 per 30 s would make the kill loop wait).
    static let limits = """
        limits:
          demo-android: { voidedPer30Seconds: 100000, voidedPerDay: 1000000 }

        """
    /// `limits`, paged as one token chain: these runs count the calls a kill may waste per chain (the slice count
    /// follows the call time measured at the window's start, which a loaded machine can stretch).
    static let oneChain = limits + "sync: { googleSlices: 1 }\n"

    @Test func killedAtRandomMomentsTheResultEqualsAnUninterruptedRun() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let storerecon = try BuiltExecutable("storerecon")
            let reference = try SimulatedStores(
                simulator: simulator, databasePrefix: "gvcrashref", extraYAML: Self.oneChain)
            let killed = try SimulatedStores(simulator: simulator, databasePrefix: "gvcrash", extraYAML: Self.oneChain)
            let arguments = ["sync", "google-voided", "--log-level", "warning"]

            let clean = try await storerecon.finish(arguments + ["--config", reference.configPath])
            #expect(clean.status == 0, "\(clean.stderr)")
            let pages = JobHarness(stores: reference).voidedGranted
            let truth = JobHarness(stores: reference).truthVoids(recordedFrom: .distantPast, to: reference.now())
            try #require(pages >= 20, "the backlog should take at least 20 pages, not \(pages)")
            #expect(try JobHarness(stores: reference).storedVoids() == truth)

            simulator.resetStatistics()
            var generator = SystemRandomNumberGenerator()
            var kills = 0
            var delays: [Int] = []
            for _ in 0..<5 {
                let delay = Int.random(in: 300...1500, using: &generator)
                delays.append(delay)
                let (process, _, _) = try storerecon.start(arguments + ["--config", killed.configPath])
                try await Task.sleep(for: .milliseconds(delay))
                guard process.isRunning else { break }
                kill(process.processIdentifier, SIGKILL)
                try await process.exited()
                try await Self.lockFreed(killed, job: GoogleVoidedSync.job)
                #expect(process.terminationReason == .uncaughtSignal)
                kills += 1
            }
            #expect(kills >= 3, "the runs ended before most kills (\(delays) ms): the test proves little")
            let finished = try await storerecon.finish(arguments + ["--config", killed.configPath])
            #expect(finished.status == 0, "\(finished.stderr)")
            let harness = JobHarness(stores: killed)
            let checkpoint = try harness.checkpoint()
            #expect(checkpoint.highWater != nil && !checkpoint.inFlight, "the window was not drained")

            #expect(try Self.ledger(killed) == Self.ledger(reference), "kills after \(delays) ms")
            #expect(try harness.storedVoids() == truth)
            let spent = harness.voidedGranted
            #expect(spent >= pages)
            // A kill wastes at most two calls: the page being stored and the next one, already travelling.
            #expect(
                spent - pages <= 2 * kills, "\(spent - pages) pages fetched again after \(kills) kills (\(delays) ms)")
            print(
                "crash safety: \(kills) kills after \(delays) ms, \(spent - pages) pages fetched again, \(pages) pages")
        }
    }

    @Test func aBackfillStoppedBySIGTERMAndKilledBySIGKILLResumesAndLandsExactly() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let storerecon = try BuiltExecutable("storerecon")
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "gvbfkill", extraYAML: Self.oneChain)
            let harness = JobHarness(stores: stores)
            let now = stores.now()
            let since = now.addingTimeInterval(-25 * 86_400)
            let until = now.addingTimeInterval(-3 * 86_400)
            let expected = harness.truthVoids(recordedFrom: since, to: until)
            let pages = JobHarness.pages(expected.count)
            try #require(pages >= 12)
            let arguments = [
                "backfill", "google-voided", "--since", PostgresTimestamp.format(since), "--until",
                PostgresTimestamp.format(until), "--config", stores.configPath,
            ]

            // SIGTERM: the page in hand is finished and saved, then exit 75.
            let (stopped, _, stoppedErr) = try storerecon.start(arguments)
            try await Task.sleep(for: .milliseconds(1500))
            try #require(stopped.isRunning, "the backfill ended before the signal")
            kill(stopped.processIdentifier, SIGTERM)
            try await stopped.exited()
            #expect(stopped.terminationStatus == 75)
            let stoppedLog = (try? String(contentsOf: stoppedErr, encoding: .utf8)) ?? ""
            #expect(stoppedLog.contains("stopping after the page in hand"), "\(stoppedLog)")
            let afterSignal = try harness.checkpoint(GoogleVoidedSync.backfillJob)
            #expect(afterSignal.inFlight)
            #expect(afterSignal.pagesDone == harness.voidedGranted, "a page fetched before the signal was not saved")

            // SIGKILL: at most the page in flight is lost.
            let (killed, _, _) = try storerecon.start(arguments)
            try await Task.sleep(for: .milliseconds(1200))
            try #require(killed.isRunning, "the backfill ended before the kill")
            kill(killed.processIdentifier, SIGKILL)
            try await killed.exited()
            try await Self.lockFreed(stores, job: GoogleVoidedSync.backfillJob)

            let finished = try await storerecon.finish(arguments)
            #expect(finished.status == 0, "\(finished.stderr)")
            #expect(try harness.storedVoids() == expected)
            #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).highWater == until)
            let spent = harness.voidedGranted
            // The kill costs at most the page being stored and the next one, already travelling.
            #expect(spent >= pages && spent <= pages + 2, "\(spent) calls for \(pages) pages after one kill")
        }
    }

    @Test func aSlicedBackfillKilledMidWayResumesEverySliceAndLandsExactly() async throws {
        var options = Self.options()
        options.faults = [:]
        // Every answer after 200 ms: the call time storerecon measures makes it page the window in 4 slices.
        options.latency = Latency(millis: 200, jitterMillis: 20)
        try await StoreSimulator.withRunning(options) { simulator in
            let storerecon = try BuiltExecutable("storerecon")
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "gvslicekill",
                extraYAML: Self.limits + "sync: { googleSlices: 4 }\n")
            let harness = JobHarness(stores: stores)
            let now = stores.now()
            let since = now.addingTimeInterval(-25 * 86_400)
            let until = now.addingTimeInterval(-2 * 86_400)
            let expected = harness.truthVoids(recordedFrom: since, to: until)
            let pages = JobHarness.pages(expected.count)
            try #require(pages >= 12)
            let arguments = [
                "backfill", "google-voided", "--since", PostgresTimestamp.format(since), "--until",
                PostgresTimestamp.format(until), "--config", stores.configPath,
            ]
            let app = stores.app(.google).id
            var kills = 0
            var splitSoFar = 0
            for _ in 0..<2 {
                // Killed once this run has stored a page of its own: mid-way, however fast the host.
                let before = try Self.googleRows(stores)
                let (process, _, _) = try storerecon.start(arguments)
                while process.isRunning, try Self.googleRows(stores) == before {
                    try await Task.sleep(for: .milliseconds(10))
                }
                guard process.isRunning else { break }
                kill(process.processIdentifier, SIGKILL)
                try await process.exited()
                try await Self.lockFreed(stores, job: GoogleVoidedSync.backfillJob)
                kills += 1
                splitSoFar = try Self.expectSlicesAccountForStoredRows(harness, app: app, kills: kills)
            }
            #expect(kills == 2, "the backfill ended before the kills: the test proves little")
            let finished = try await storerecon.finish(arguments)
            #expect(finished.status == 0, "\(finished.stderr)")
            #expect(try harness.storedVoids() == expected)
            #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).highWater == until)
            #expect(simulator.mostInFlight(.googleVoidedPurchases) > 1)
            // 4 slices end on a page each (3 more than one chain); each kill costs each slice at most the page being
            // stored and the next one, already travelling; each split at most two (the new slice's last page, and
            // the old chain's page that reads past its new end).
            let finalSplits = finished.stderr.firstMatch(of: /slice_splits=(\d+)/).flatMap { Int($0.1) } ?? 0
            let splits = splitSoFar + finalSplits
            let spent = harness.voidedGranted
            #expect(
                spent >= pages && spent <= pages + 3 + 2 * (4 + splits) * kills + 2 * splits,
                "\(spent) calls for \(pages) pages after \(kills) kills and \(splits) splits")
            print("sliced backfill: \(kills) kills, \(spent) calls for \(pages) pages")
        }
    }

    /// After a kill: the slices saved are the 4 planned and those split off running ones, the backfill is still in
    /// flight, and the slices' rows account for what is stored. Returns how many slices were split off so far.
    static func expectSlicesAccountForStoredRows(_ harness: JobHarness, app: String, kills: Int) throws -> Int {
        let slices = try VoidedSlice.load(job: GoogleVoidedSync.backfillJob, app: app, on: harness.connection())
        // At most twice the starting slices a run.
        #expect(slices.count >= 4 && slices.count <= 4 + 8 * kills, "\(slices.count) slices")
        let splitSoFar = slices.count - 4
        #expect(try harness.checkpoint(GoogleVoidedSync.backfillJob).inFlight)
        // What is stored is what the slices' rows say was stored: exactly, without splits; with them, the old
        // chain's page that reads past its new end counts rows the new slice counts again (stored once).
        let stored = try Int64(harness.storedVoids().count)
        let counted = slices.map(\.rowsDone).reduce(0, +)
        if splitSoFar == 0 {
            #expect(stored == counted)
        } else {
            #expect(stored <= counted, "\(stored) stored, \(counted) counted by \(slices.count) slices")
        }
        return splitSoFar
    }

    /// Google refund rows stored so far.
    static func googleRows(_ stores: SimulatedStores) throws -> Int {
        let connection = try PostgresConnection(conninfo: stores.conninfo)
        defer { connection.close() }
        return try connection.query("SELECT count(*)::int AS n FROM refund WHERE platform = 'google'")[0]
            .decode("n", as: Int.self)
    }

    /// Waits until the server has ended the killed process's session and so freed its job lock: a run started
    /// before that is skipped (exit 0, nothing done), which a loaded host can make happen.
    static func lockFreed(_ stores: SimulatedStores, job: String) async throws {
        let connection = try PostgresConnection(conninfo: stores.conninfo)
        defer { connection.close() }
        _ = try await JobLock.withLock(job: job, app: stores.app(.google).id, wait: true, on: connection) {}
    }

    /// The refund ledger as comparable text rows (run ids and insertion times left out).
    static func ledger(_ stores: SimulatedStores) throws -> [String] {
        let connection = try PostgresConnection(conninfo: stores.conninfo)
        defer { connection.close() }
        let rows = try connection.query(
            """
            SELECT concat_ws('|', app_id, platform, order_id, part_key, original_id, product_id, purchased_at,
                             refunded_at, reason_code, reason_label, source_code, refund_type, quantity, price_milli,
                             amount_milli, currency, payload::text) AS line
            FROM refund ORDER BY app_id, order_id, part_key
            """)
        return try rows.map { try $0.decode("line") }
    }
}

extension BuiltExecutable {
    /// Runs to completion without blocking a thread of the cooperative pool (the simulator answers on it).
    func finish(_ arguments: [String]) async throws -> (status: Int32, stderr: String) {
        let (process, _, stderr) = try start(arguments)
        try await process.exited()
        return (process.terminationStatus, (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
    }
}

extension Process {
    /// Waits for the process to end by polling, so no thread blocks in `waitUntilExit`.
    func exited() async throws {
        while isRunning { try await Task.sleep(for: .milliseconds(10)) }
    }
}
