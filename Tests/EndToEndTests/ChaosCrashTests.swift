import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// `storerecon run nightly` (Google voided sync, Apple refund sync, recheck of both apps) killed with SIGKILL at
/// seeded random points, then run again: the database ends equal to an uninterrupted run's and no store limit was
/// passed, whatever the kills cut.
@Suite("chaos: SIGKILL at random points of a nightly run")
struct ChaosCrashTests {
    /// Three rounds in the suite (30 kills); `STORERECON_CHAOS_ROUNDS=N` plays more.
    static let rounds = ProcessInfo.processInfo.environment["STORERECON_CHAOS_ROUNDS"].flatMap { Int($0) } ?? 3
    static let killsPerRound = 10

    /// Starts a nightly run and kills it after `delay` seconds unless it ended first. Returns whether it was killed
    /// and how long it ran.
    func killNightly(_ stores: SimulatedStores, after delay: Double) async throws -> (killed: Bool, ran: Double) {
        let clock = ContinuousClock()
        let started = clock.now
        let (process, _, errors) = try Chaos.startNightly(stores)
        let deadline = started.advanced(by: .milliseconds(Int(delay * 1000)))
        while process.isRunning && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        await BuiltExecutable.waitForExit(process)
        let ran = (clock.now - started).chaosSeconds
        if process.terminationReason == .uncaughtSignal {
            #expect(process.terminationStatus == SIGKILL)
            return (true, ran)
        }
        // The run ended before its kill: it must have ended well.
        #expect([0, 75].contains(process.terminationStatus), "\(Chaos.text(errors).suffix(1500))")
        return (false, ran)
    }

    /// Fresh databases (``rounds``), ten kills on each back to back (each run resumes what the killed one before left), then
    /// one clean run and the comparison. The first delay of a round is drawn over an uninterrupted run's duration;
    /// when a run ends before its kill, later delays are drawn over that shorter run, so kills keep landing inside
    /// the work that is left (until none is, and they land in a run that only checks).
    ///
    /// Each round has a simulator of its own with the same store (one set of options, so one scenario and one store
    /// clock): a fresh database's quota gate knows nothing of the calls the rounds before made, as a new host's would
    /// not, and on one simulator a round's first Google voided calls could meet the previous round's in one 30-s
    /// window and be refused (each round would have to wait out that window first).
    @Test func killsEachFollowedByARerunEndEqualToAnUninterruptedRun() async throws {
        let options = Chaos.options
        let (expected, full) = try await StoreSimulator.withRunning(options) { try await Chaos.timedReference($0) }
        var random = ChaosRandom(seed: 0xC4A0_5001)
        var killed = 0
        for round in 0..<Self.rounds {
            killed += try await StoreSimulator.withRunning(options) { simulator in
                try await killRound(simulator, expected: expected, full: full, random: &random, label: "round \(round)")
            }
        }
        #expect(killed >= Self.rounds * Self.killsPerRound / 2, "only \(killed) runs were still going when killed")
        print("chaos kills: \(killed) of \(Self.rounds * Self.killsPerRound) killed mid-run; full run \(full) s")
    }

    /// One round on a fresh database: ``killsPerRound`` kills, each checked for wrong or half-written rows, then a
    /// clean run that must end equal to the reference, within the store's limits. Returns how many runs were killed.
    func killRound(
        _ simulator: StoreSimulator, expected: Chaos.Snapshot, full: Double, random: inout ChaosRandom, label: String
    ) async throws -> Int {
        let stores = try await Chaos.stores(simulator, prefix: "chaoskill")
        var bound = full
        var killed = 0
        for _ in 0..<Self.killsPerRound {
            let delay = Double.random(in: 0.02...max(0.05, bound), using: &random)
            let (wasKilled, ran) = try await killNightly(stores, after: delay)
            if wasKilled { killed += 1 } else { bound = ran }
            let now = try Chaos.snapshot(stores.conninfo)
            // Every value must be one an uninterrupted run stores, except whether the refund was reversed: the
            // reversal comes from a later step (Notification History), which the kill may have cut.
            let wrong = Set(now.refunds.map(Self.withoutReversal))
                .subtracting(expected.refunds.map(Self.withoutReversal)).sorted()
            #expect(wrong.isEmpty, "\(label): a killed run stored \(wrong.count) wrong rows: \(wrong.prefix(3))")
            #expect(try Chaos.halfWritten(stores.conninfo) == [], "\(label)")
        }
        try await Chaos.waitForSessionsToEnd(stores.conninfo)
        let rerun = try await Chaos.storerecon(stores, ["run", "nightly"])
        #expect(rerun.status == 0, "\(label): \(rerun.stderr.suffix(2000))")
        let final = try Chaos.snapshot(stores.conninfo)
        #expect(final == expected, "\(label): \(final.difference(from: expected))")
        Chaos.expectWithinQuotas(simulator)
        return killed
    }

    /// A snapshot's refund line without its last field (reversed or not).
    static func withoutReversal(_ line: String) -> String {
        String(line[..<(line.lastIndex(of: "|") ?? line.endIndex)])
    }

    /// A run killed while it holds leases (recheck: subscriptions; Apple refund sync: customers) must not keep the
    /// next run from that work until the leases run out: the rerun right after the kill ends equal to an
    /// uninterrupted run. (Before leases knew their session, the rerun ended "ok" without those rows.)
    @Test(arguments: ["subscription", "apple_refund_cursor"])
    func aRunKilledHoldingLeasesDoesNotHoldUpTheNextRun(table: String) async throws {
        try await StoreSimulator.withRunning(Chaos.options) { simulator in
            let expected = try await Chaos.reference(simulator)
            let stores = try await Chaos.stores(simulator, prefix: "chaoslease")
            let watcher = try Chaos.connect(stores.conninfo)
            defer { watcher.close() }
            let (process, _, _) = try Chaos.startNightly(stores)
            var leased = 0
            while process.isRunning && leased == 0 {
                leased = try watcher.query(
                    "SELECT count(*)::int AS n FROM \(table) WHERE claimed_until > now()")[0].decode("n")
            }
            kill(process.processIdentifier, SIGKILL)
            await BuiltExecutable.waitForExit(process)
            #expect(leased > 0, "the run ended before it leased anything")
            try await Chaos.waitForSessionsToEnd(stores.conninfo)
            let rerun = try await Chaos.storerecon(stores, ["run", "nightly"])
            #expect(rerun.status == 0, "\(rerun.stderr.suffix(2000))")
            let final = try Chaos.snapshot(stores.conninfo)
            #expect(final == expected, "\(final.difference(from: expected))")
        }
    }
}

extension Duration {
    var chaosSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
