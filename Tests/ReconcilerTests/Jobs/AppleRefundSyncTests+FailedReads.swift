import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

extension AppleRefundSyncTests {
    /// Customers of the sweep whose reads failed (Apple's answer was not its JSON, as from a proxy during an outage)
    /// are marked so: `backfill apple-refunds --all` queues them although they were "checked" minutes ago (and the
    /// sweep takes them again at once rather than after `sync.appleRecheckAfter`). A read to the end clears the mark.
    @Test func customersWhoseReadsFailedAreTakenAsNotRead() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        options.faults[.appleRefundHistory] = FaultSettings(rates: [.malformedJSON: 1])
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applefailed", extraYAML: "sync: { appleSweepCustomers: 40 }\n")
            let harness = JobHarness(stores: stores)
            try importSubscriptions(stores)
            let connection = try harness.connection()
            func count(_ condition: String) throws -> Int {
                try connection.query("SELECT count(*) AS n FROM apple_refund_cursor WHERE \(condition)")[0].decode("n")
            }
            let first = try await appleSync(harness)
            #expect(first.exitCode == 1)
            #expect(try count("read_failed_at IS NOT NULL") == first.counts["customer_errors"], "\(first.counts)")
            let swept = try count("read_failed_at IS NOT NULL AND queued_at IS NULL")
            #expect(swept == 40, "the sweep's customers, none of them read: \(first.counts)")

            try AppleRefundCursorStore(appId: stores.app(.apple).id).queueBackfillAll(
                recheckSeconds: 20 * 3600, on: connection)
            #expect(try count("queue_reason = 'backfill' AND read_failed_at IS NOT NULL") == swept)

            simulator.clearFaults()
            let backfill = try await appleSync(harness, .backfillAll)
            #expect(backfill.exitCode == 0, "\(backfill.error ?? "")")
            #expect(try count("read_failed_at IS NOT NULL") == 0)
        }
    }
}
