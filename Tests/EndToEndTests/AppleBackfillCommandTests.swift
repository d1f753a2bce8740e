import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// `storerecon backfill apple-refunds --status` and `--cancel`, run as an operator would.
@Suite("storerecon backfill apple-refunds --status/--cancel, end to end")
struct AppleBackfillCommandTests {
    func run(_ stores: SimulatedStores, _ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await BuiltExecutable("storerecon").run(arguments + ["--config", stores.configPath])
    }

    @Test func statusFollowsABackfillAndCancelKeepsWhatIsStored() async throws {
        var spec = ScenarioSpec(
            seed: 45, subscriptions: 80, oneTimePurchases: 0, refunds: 12, historyDays: 60, futureDays: 1,
            sandboxShare: 0)
        spec.apps = [SimulatedApp.defaults[0]]
        var options = SimulatorOptions(scenario: spec)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        options.quotas.appleRefundHistoryPerSecond = 1000
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "clibackfill")
            let csv = stores.directory.appendingPathComponent("subscriptions.csv")
            let known = try SubscriptionExport.write(spec, to: csv)
            let imported = try await run(stores, ["import", "subscriptions", csv.path])
            #expect(imported.status == 0, "\(imported.stderr.suffix(1000))")
            let none = try await run(stores, ["backfill", "apple-refunds", "--status"])
            #expect(none.status == 0, "\(none.stderr.suffix(1000))")
            #expect(none.stdout.contains("demo-ios: no backfill started"), "\(none.stdout)")
            let backfill = try await run(stores, ["backfill", "apple-refunds", "--all"])
            #expect(backfill.status == 0, "\(backfill.stderr.suffix(1000))")
            let done = try await run(stores, ["backfill", "apple-refunds", "--status"])
            #expect(done.stdout.contains("finished"), "\(done.stdout)")
            #expect(done.stdout.contains("\(known) customers queued, \(known) done, 0 left"), "\(done.stdout)")
            let refunds = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT count(*) AS n FROM refund")[0].decode("n", as: Int.self)
            #expect(refunds > 0)
            let cancel = try await run(stores, ["backfill", "apple-refunds", "--cancel"])
            #expect(cancel.status == 0, "\(cancel.stderr.suffix(1000))")
            #expect(cancel.stdout.contains("0 queued customers dropped"), "\(cancel.stdout)")
            let after = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT count(*) AS n FROM refund")[0].decode("n", as: Int.self)
            #expect(after == refunds)
            let both = try await run(stores, ["backfill", "apple-refunds", "--status", "--all"])
            #expect(both.status != 0 && both.stderr.contains("--status and --cancel go alone"), "\(both.stderr)")
        }
    }
}
