import Foundation
import RateLimiting
import StoreSimulator
import TestSupport
import Testing

/// Four `quota-probe` processes make real `voidedpurchases.list` calls with storerecon's Play client through the
/// shared PostgreSQL gate, and the store simulator counts them on its own clock. In the serialized
/// `PostgresQuotaGate` suite, so no other rate measurement runs beside it.
extension PostgresQuotaGateTests {
    /// The published 30 in any 30 s, scaled down in time to 5 in any 2 s on both sides, so a test takes seconds.
    static func scaledSimulator() -> SimulatorOptions {
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 5, anchorMillis: Int64(Date().timeIntervalSince1970 * 1000), subscriptions: 50,
                oneTimePurchases: 50, refunds: 20, historyDays: 5, futureDays: 1, sandboxShare: 0))
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        options.quotas.voidedPerWindow = 5
        options.quotas.voidedWindowSeconds = 2
        return options
    }

    static func probeArguments(_ stores: SimulatedStores, calls: Int, extra: [String]) -> [String] {
        [
            "--conninfo", stores.conninfo, "--app", stores.app(.google).id, "--api", api.rawValue,
            "--calls", "\(calls)", "--store-config", stores.configPath,
        ] + extra
    }

    @Test func fourProcessesStayInsideTheStoresOwnCount() async throws {
        try await StoreSimulator.withRunning(Self.scaledSimulator()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "qstore4")
            let app = stores.app(.google).id
            let arguments = (0..<4).map { _ in Self.probeArguments(stores, calls: 6, extra: ["--limit", "5/2s"]) }
            let results = try await Self.runTogether(arguments)
            for (status, output) in results {
                #expect(status == 0, "\(output)")
                #expect(output.split(separator: "\n").filter { $0.hasPrefix("call ") }.count == 6)
            }
            let statistics = try #require(
                simulator.statistics().first { $0.app == app && $0.endpoint == .googleVoidedPurchases })
            #expect(statistics.granted == 24)
            // At most one: on a loaded host a granted call may arrive later than the margin, once; its refusal
            // widens the margin for all four processes (migration 0014), and the call is made again.
            #expect(statistics.refused <= 1, "the store refused calls: the processes together went over")
            #expect(simulator.maxGranted(app: app, endpoint: .googleVoidedPurchases, inAnyMillis: 2000) <= 5)
            // The share of the rate used depends on the machine, so it is printed here and measured by scripts/bench.
            let times = simulator.grantTimes(app: app, endpoint: .googleVoidedPurchases)
            if let first = times.first, let last = times.last, last > first {
                let used = Double(times.count - 5) / (Double(last - first) / 1000) / (5.0 / 2.0)
                print("quota: 4 processes on the simulator: \(String(format: "%.3f", used)) of 5 per 2 s sustained")
            }
        }
    }

    @Test func aDailyCapReachedByOneProcessStopsTheOthers() async throws {
        try await StoreSimulator.withRunning(Self.scaledSimulator()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "qstorecap")
            let app = stores.app(.google).id
            let arguments = (0..<4).map { _ in
                Self.probeArguments(stores, calls: 5, extra: ["--limit", "5/2s", "--daily-cap", "7"])
            }
            let results = try await Self.runTogether(arguments)
            let made = results.map { $0.output.split(separator: "\n").filter { $0.hasPrefix("call ") }.count }
            #expect(made.reduce(0, +) == 7)
            #expect(results.allSatisfy { [0, 75].contains($0.status) })
            #expect(results.filter { $0.status == 75 }.count >= 3, "\(results.map(\.status))")
            let statistics = try #require(
                simulator.statistics().first { $0.app == app && $0.endpoint == .googleVoidedPurchases })
            #expect(statistics.granted == 7, "the store saw no call beyond the shared cap")
            #expect(statistics.refused == 0)
        }
    }
}
