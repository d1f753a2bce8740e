import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

extension AppleRefundRequestsTests {
    /// The refunds Apple grants at the end of refund requests are refunds like any other: Get Refund History lists
    /// them with the customer's others, and the nightly refund sync (which learns of them from their `REFUND`
    /// notification and from Refund History both) stores each once, with the amount Apple signed.
    @Test func refundsGrantedOnRequestsLandOnceThroughTheNightlySync() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applerqrefunds", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            try importFacts(simulator, stores, on: connection)
            let answered = try await run(stores)
            #expect(answered.exitCode == 0, "\(answered.error ?? "")")
            #expect(try Self.count(connection, "answer = 'answered'") > 0)

            // Apple decides every request at the end of its 12 hours (no preference was sent): one in two refunded.
            simulator.clock.advance(millis: 13 * 3_600_000)
            let granted = simulator.groundTruth().appleRefunds
            let requested = Set(
                try connection.query("SELECT transaction_id FROM refund_request").map {
                    try $0.decode("transaction_id", as: String.self)
                })
            #expect(granted.count > 5 && granted.allSatisfy { requested.contains($0.transactionId) })

            let sync = AppleRefundSyncTests()
            let harness = JobHarness(stores: stores)
            let first = try await sync.appleSync(harness)
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            try sync.expectLedgerEqualsTruth(harness)
            #expect((first.calls["apple.refundhistory"] ?? 0) > 0)
            let again = try await sync.appleSync(harness)
            #expect(again.exitCode == 0, "\(again.error ?? "")")
            try sync.expectLedgerEqualsTruth(harness)
        }
    }
}
