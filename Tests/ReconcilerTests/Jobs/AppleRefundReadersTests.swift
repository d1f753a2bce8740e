import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// `sync.appleConcurrency`: one process reads several customers at once, each reader on its own database session,
/// and the readers split the work without reading a customer twice or going past the sweep's limit.
extension AppleRefundSyncTests {
    /// Sessions (backend pids) that claimed the customers read this run.
    func claimingSessions(_ harness: JobHarness) throws -> Int {
        try harness.connection().query(
            """
            SELECT count(DISTINCT claimed_backend) AS n FROM apple_refund_cursor WHERE last_checked_at IS NOT NULL
            """)[0].decode("n")
    }

    @Test(arguments: [1, 4])
    func readersSplitTheQueueAndReadEachCustomerOnce(readers: Int) async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        // Every Refund History call takes 20 ms, so each reader is still waiting on one when the others claim theirs.
        options.faults[.appleRefundHistory] = FaultSettings(rates: [.slow: 1], slowMillis: 20)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applereaders\(readers)",
                extraYAML: "sync: { appleSweepCustomers: 0, appleConcurrency: \(readers) }\n")
            let harness = JobHarness(stores: stores)
            let result = try await appleSync(harness)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            try expectLedgerEqualsTruth(harness)
            let refunded = Set(truth(harness).map(\.originalTransactionId)).count
            #expect(result.counts["customers"] == refunded, "\(result.counts)")
            #expect(result.calls["apple.refundhistory"] == refunded, "\(result.calls)")
            #expect(try claimingSessions(harness) == readers)
        }
    }

    @Test func readersTogetherSweepNoMoreThanTheLimit() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applesweep",
                extraYAML: "sync: { appleSweepCustomers: 37, appleConcurrency: 4 }\n")
            try importSubscriptions(stores)
            let harness = JobHarness(stores: stores)
            let result = try await appleSync(harness)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.counts["swept"] == 37, "\(result.counts)")
            let refunded = Set(truth(harness).map(\.originalTransactionId)).count
            #expect(result.counts["customers"] == refunded + 37, "\(result.counts)")
            // The sweep read the customers never checked before, 37 of them and no more.
            let checked: Int = try harness.connection().query(
                "SELECT count(*) AS n FROM apple_refund_cursor WHERE last_checked_at IS NOT NULL")[0].decode("n")
            #expect(checked == refunded + 37)
        }
    }
}

extension AppleRefundSyncTests {
    /// The benchmark's verify stage (`verify-probe`) takes payloads in hand through the sync's own page path: the same
    /// rows as a sync, and a payload that fails verification is left out and named.
    @Test func payloadsInHandAreVerifiedAndStoredLikeTheSyncsPages() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applestage", extraYAML: "sync: { appleConcurrency: 3 }\n")
            let harness = JobHarness(stores: stores)
            let customers = Set(truth(harness).map(\.originalTransactionId)).sorted()
            var pages: [[String]] = []
            var result = try await appleJob(harness, named: "stage") { _, access, _ in
                for customer in customers {
                    pages.append(
                        try await access.client.refundHistory(
                            transactionId: customer, revision: nil, purpose: .backfill
                        )
                        .0.signedTransactions)
                }
            }
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            // One payload of the last page re-signed by nobody: its signature no longer matches.
            var forged = pages[pages.count - 1]
            forged[0] = String(forged[0].dropLast(4)) + "AAAA"
            let all = pages.dropLast() + [forged]
            result = try await appleJob(harness, named: "stage") { sync, _, environment in
                _ = try await sync.store(pages: Array(all), from: .production, in: environment)
            }
            #expect(result.counts["verification_failed"] == 1, "\(result.counts)")
            #expect(result.calls.isEmpty, "no store call: \(result.calls)")
            // Everything but the forged payload is stored, as the sync stores it (reversals are the notifications').
            let stored = try stored(harness)
            let expected = Dictionary(uniqueKeysWithValues: truth(harness).map { ($0.transactionId, $0) })
            #expect(stored.count == pages.joined().count - 1, "\(stored.count) of \(pages.joined().count)")
            for row in stored {
                var truth = expected[row.transactionId]
                truth?.reversed = false
                #expect(truth == row)
            }
        }
    }
}
