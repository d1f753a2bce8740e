import Foundation
import StoreSimulator
import TestSupport
import Testing

/// Every fault switch of the simulator, alone and all of them mixed at random rates, on every endpoint of both stores
/// over a whole nightly run of the built binary: nothing wrong is stored, nothing is half-written, no published limit
/// is passed, and once the faults stop a rerun ends equal to an uninterrupted run.
@Suite("chaos: store faults over a whole nightly run", .serialized)
struct StoreFaultChaosTests {
    /// Every kind at 30 % of the calls, two kinds to a run (one alone each when `STORERECON_CHAOS_EACH_KIND=1`:
    /// twice the runs, for a change to the retry or fault paths); then every kind at once, each at a rate drawn from
    /// a fixed seed.
    static let cases: [[FaultKind: Double]] = {
        // Answers a store means for good (final "not found", 410 Gone, the day's quota spent, a proxy's audience)
        // are not faults a rerun can heal: each has its own test.
        let kinds = FaultKind.allCases.filter(\.isTransient)
        let perRun = ProcessInfo.processInfo.environment["STORERECON_CHAOS_EACH_KIND"] == "1" ? 1 : 2
        var cases = stride(from: 0, to: kinds.count, by: perRun).map { start in
            Dictionary(uniqueKeysWithValues: kinds[start..<min(start + perRun, kinds.count)].map { ($0, 0.3) })
        }
        var random = ChaosRandom(seed: 0xFA17)
        cases.append(
            Dictionary(uniqueKeysWithValues: kinds.map { ($0, Double.random(in: 0.02...0.15, using: &random)) }))
        return cases
    }()

    @Test(arguments: cases)
    func aNightlyRunUnderStoreFaultsStoresNothingWrongAndTheRerunEndsEqual(_ rates: [FaultKind: Double]) async throws {
        try await StoreSimulator.withRunning(Chaos.options) { simulator in
            let expected = try await Chaos.reference(simulator)
            simulator.resetStatistics()
            let stores = try await Chaos.stores(simulator, prefix: "storefaults")
            for endpoint in SimulatorEndpoint.allCases {
                simulator.setFaults(FaultSettings(rates: rates, slowMillis: 200), for: endpoint)
            }
            let faulty = try await Chaos.storerecon(stores, ["run", "nightly"])
            let label = rates.keys.map(\.rawValue).sorted().joined(separator: ",")
            // 0 when every fault was retried away, 75 when a store outage stopped a job, 1 when an answer could not
            // be used (malformed, forged): never a crash.
            #expect([0, 1, 75].contains(faulty.status), "\(label): \(faulty.stderr.suffix(2000))")
            try Chaos.expectNoWrongRefund(stores.conninfo, expected)
            #expect(try Chaos.halfWritten(stores.conninfo) == [], "\(label)")

            simulator.clearFaults()
            // The rerun plays the next scheduled run: by then the 15-minute leases on subscriptions and customers
            // that got an unusable answer (kept so that no run asks again at once) have run out.
            let admin = try Chaos.connect(stores.conninfo)
            defer { admin.close() }
            try admin.executeScript(
                """
                UPDATE subscription SET claimed_until = NULL WHERE claimed_until IS NOT NULL;
                UPDATE apple_refund_cursor SET claimed_until = NULL WHERE claimed_until IS NOT NULL;
                """)
            let rerun = try await Chaos.storerecon(stores, ["run", "nightly"])
            #expect(rerun.status == 0, "\(label): \(rerun.stderr.suffix(2000))")
            // A job that failed under the faults let the next one observe the stores first (see Chaos.expectEqual).
            try Chaos.expectEqual(stores.conninfo, expected, orderedLikeTheReference: false)
            // A dropped connection is the one fault that can cost quota the gate never granted: when a reused
            // keep-alive connection closes before any byte of the answer, libcurl sends the request
            // once more by itself, so the store may count two calls for one grant and refuse a later one, which
            // storerecon then handles as any 429. Every other fault must leave the store's counts inside the limits.
            Chaos.expectWithinQuotas(simulator, allowingRefusals: rates[.dropConnection] != nil)
        }
    }
}
