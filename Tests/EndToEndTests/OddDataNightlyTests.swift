import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// A whole nightly run of the built binary against a scenario with odd rows of every sort mixed with store
/// outages: the ledger equals the ground truth for the well-formed rows, the quarantine holds exactly the rows no
/// ledger can take, `status` needs attention, and the metrics file says how many.
@Suite("storerecon run nightly with odd store data, end to end")
struct OddDataNightlyTests {
    /// Runs the command, and again while it stops with 75, up to four times: an outage that outlasts the retries
    /// stops a run with 75 and progress saved, and cron runs it again.
    static func runAsCronDoes(_ stores: SimulatedStores, _ arguments: [String]) async throws -> BuiltExecutable.Outcome
    {
        var outcome = try await NightlyRunTests().run(stores, arguments)
        for _ in 0..<4 where outcome.status == 75 {
            outcome = try await NightlyRunTests().run(stores, arguments)
        }
        return outcome
    }

    @Test func oddRowsMixedWithOutagesNeverStopTheNightAndLandExactly() async throws {
        var options = NightlyRunTests.options()
        options.oddRows = 0.03
        for endpoint in [SimulatorEndpoint.googleVoidedPurchases, .appleRefundHistory, .appleNotificationHistory] {
            options.faults[endpoint] = FaultSettings(rates: [.serverError: 0.15])
        }
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "nightodd", extraYAML: NightlyRunTests.extra)
            let metrics = stores.directory.appendingPathComponent("storerecon.prom").path
            let outcome = try await Self.runAsCronDoes(stores, ["run", "nightly", "--metrics-file", metrics])
            #expect(outcome.status == 0, "\(outcome.stderr.suffix(2000))")

            let truth = simulator.groundTruth()
            let oldest = truth.nowMillis - 30 * 86_400_000 + 600_000
            let window = truth.googleVoids.filter {
                $0.recorded && $0.recordedTimeMillis >= oldest && $0.recordedTimeMillis <= truth.nowMillis - 60_000
            }
            let unstorable = window.filter { $0.odd?.isUnstorable == true }
            #expect(!unstorable.isEmpty)
            let wellFormed = Set(window.filter { $0.odd?.isUnstorable != true }.map(\.orderId))
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            let google = Set(
                try connection.query("SELECT DISTINCT order_id FROM refund WHERE platform = 'google'").map {
                    try $0.decode("order_id", as: String.self)
                })
            #expect(google == wellFormed)
            let apple: Int = try connection.query(
                "SELECT count(*) AS n FROM refund WHERE platform = 'apple'")[0].decode("n")
            #expect(apple == NightlyRunTests().truthCounts(simulator).apple)
            let met: Int = try connection.query(
                "SELECT coalesce(sum(seen_count), 0)::int AS n FROM quarantine WHERE job = 'google_voided'")[0]
                .decode("n")
            #expect(met >= unstorable.count, "every unstorable row is in the quarantine")
            let open: Int = try connection.query(
                "SELECT count(*) AS n FROM quarantine WHERE resolved_at IS NULL")[0].decode("n")
            #expect(open > 0)

            let status = try await NightlyRunTests().run(stores, ["status"])
            #expect(status.status == 1)
            #expect(status.stdout.contains("QUARANTINED google_voided"), "\(status.stdout)")
            let prom = try String(contentsOfFile: metrics, encoding: .utf8)
            #expect(
                prom.contains("storerecon_quarantined_rows{app=\"demo-android\",job=\"google_voided\"} \(open)"),
                "\(prom)")
            // Every quarantine of the app's store has its series (0 when empty), so an alert on `> 0` sees each.
            #expect(prom.contains("storerecon_quarantined_rows{app=\"demo-android\",job=\"google_orders\"} 0"))
            #expect(!prom.contains("storerecon_quarantined_rows{app=\"demo-android\",job=\"apple_refunds\"}"))

            // A second night changes nothing in the ledger or the quarantine's set of rows.
            let before = try connection.query("SELECT count(*) AS n FROM refund")[0].decode("n", as: Int.self)
            let again = try await Self.runAsCronDoes(stores, ["run", "nightly"])
            #expect(again.status == 0, "\(again.stderr.suffix(2000))")
            #expect(try connection.query("SELECT count(*) AS n FROM refund")[0].decode("n", as: Int.self) == before)
            #expect(
                try connection.query("SELECT count(*) AS n FROM quarantine WHERE resolved_at IS NULL")[0].decode(
                    "n", as: Int.self) == open)
        }
    }
}
