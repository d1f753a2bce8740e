import AppStoreServerAPI
import Foundation
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

@Suite("Apple refund sync against the store simulator and a real database")
struct AppleRefundSyncTests {
    static let spec = ScenarioSpec(
        seed: 21, subscriptions: 20_000, oneTimePurchases: 0, refunds: 2000, historyDays: 120, futureDays: 10,
        sandboxShare: 0)

    /// One stored Apple refund as the comparison sees it.
    struct StoredRefund: Hashable {
        var transactionId: String
        var originalTransactionId: String
        var type: String
        var percentage: Int?
        /// The refund in exact nanos.
        var amountNanos: Int64?
        var reversed: Bool
    }

    func stored(_ harness: JobHarness) throws -> Set<StoredRefund> {
        let rows = try harness.connection().query(
            """
            SELECT order_id, original_id, refund_type, percentage_milli,
                   (gross_amount * 10::numeric ^ (9 - amount_precision))::bigint AS nanos, reversed_at IS NOT NULL AS rev
            FROM refund WHERE platform = 'apple'
            """)
        return Set(
            try rows.map { row in
                StoredRefund(
                    transactionId: try row.decode("order_id"), originalTransactionId: try row.decode("original_id"),
                    type: try row.decode("refund_type"), percentage: try row.decodeIfPresent("percentage_milli"),
                    amountNanos: try row.decodeIfPresent("nanos"), reversed: try row.decode("rev"))
            })
    }

    func truth(_ harness: JobHarness) -> Set<StoredRefund> {
        let truth = harness.stores.simulator.groundTruth()
        return Set(
            truth.appleRefunds.filter { $0.revocationDate <= truth.nowMillis }.map { refund in
                let type =
                    refund.revocationType == "REFUND_PRORATED"
                    ? "prorated" : refund.revocationType == "FAMILY_REVOKE" ? "family_revoke" : "full"
                // From the scenario's facts: the unit price times the units bought (Apple's signed price is that
                // total already), times the refunded share; a family revoke moves no money.
                let total = refund.unitPriceMilli * Int64(refund.quantity) * 1_000_000
                let amount: Int64? =
                    type == "family_revoke"
                    ? nil
                    : type == "prorated" ? total / 100_000 * Int64(refund.revocationPercentage ?? 100_000) : total
                return StoredRefund(
                    transactionId: refund.transactionId, originalTransactionId: refund.originalTransactionId,
                    type: type,
                    percentage: type == "prorated" ? refund.revocationPercentage : refund.revocationPercentage,
                    amountNanos: amount, reversed: refund.reversedDate.map { $0 <= truth.nowMillis } ?? false)
            })
    }

    /// Compares the ledger with ground truth, naming a few differences rather than dumping both sets.
    func expectLedgerEqualsTruth(_ harness: JobHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let actual = try stored(harness)
        let expected = truth(harness)
        let missing = expected.subtracting(actual)
        let extra = actual.subtracting(expected)
        #expect(
            missing.isEmpty && extra.isEmpty,
            "\(missing.count) missing, e.g. \(Array(missing.prefix(2))); \(extra.count) unexpected, e.g. \(Array(extra.prefix(2)))",
            sourceLocation: sourceLocation)
    }

    func appleSync(_ harness: JobHarness, _ mode: AppleRefundSync.Mode = .incremental, dryRun: Bool = false)
        async throws -> JobRunner.Result
    {
        try await appleJob(harness, dryRun: dryRun) { sync, _, environment in try await sync.run(mode, in: environment)
        }
    }

    /// Runs `body` as a job of the harness's Apple app, with the job and the app's store access on the job's gate.
    func appleJob(
        _ harness: JobHarness, named job: String = AppleRefundSync.job, dryRun: Bool = false,
        _ body: (AppleRefundSync, AppleStoreAccess, JobEnvironment) async throws -> Void
    ) async throws -> JobRunner.Result {
        let app = harness.stores.app(.apple)
        let configuration = harness.stores.configuration
        return try await harness.runner(dryRun: dryRun).run(job: job, app: app, waitForLock: false) { environment in
            let access = try StoreClients.apple(
                for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
            try await body(AppleRefundSync(app: app, configuration: configuration, access: access), access, environment)
        }
    }

    @Test func discoveryThenHistoryEqualsGroundTruthWithFewCalls() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "apple", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let harness = JobHarness(stores: stores)
            let result = try await appleSync(harness)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let expected = truth(harness)
            #expect(expected.count > 300)
            #expect(expected.contains { $0.type == "prorated" })
            #expect(expected.contains { $0.type == "family_revoke" })
            #expect(expected.contains { $0.reversed })
            try expectLedgerEqualsTruth(harness)
            // Refund History is asked once per refunded customer (plus extra pages), not once per customer.
            let customers = Set(expected.map(\.originalTransactionId)).count
            let historyCalls = result.calls["apple.refundhistory"] ?? 0
            #expect(historyCalls >= customers)
            #expect(historyCalls <= customers + customers / 10 + 5)
            #expect(historyCalls < Self.spec.subscriptions / 5)
        }
    }

    /// Odd data: refund-history pages repeat transactions and notification history repeats notifications; the
    /// repeats are merged before SQL, every refund lands once, nothing is quarantined, and a rerun changes nothing.
    @Test func repeatedTransactionsAndNotificationsAreMergedAndLandOnce() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        options.oddRows = 0.3
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "appleodd", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let harness = JobHarness(stores: stores)
            let result = try await appleSync(harness)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect((result.counts["merged_repeats"] ?? 0) > 0)
            #expect(result.counts["quarantined"] == nil)
            try expectLedgerEqualsTruth(harness)
            let rerun = try await appleSync(harness)
            #expect(rerun.exitCode == 0, "\(rerun.error ?? "")")
            try expectLedgerEqualsTruth(harness)
        }
    }

    /// Customers refunded several times: one notification page can name a customer twice, and their refund
    /// history runs to several payloads a page.
    @Test func customersWithSeveralRefundsAreQueuedOnceAndStoredWhole() async throws {
        var spec = ScenarioSpec(
            seed: 32, subscriptions: 1000, oneTimePurchases: 200, refunds: 500, historyDays: 150, futureDays: 0,
            sandboxShare: 0, maxRefundsPerPurchase: 3)
        spec.apps = [SimulatedApp.defaults[0]]
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applemany", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let harness = JobHarness(stores: stores)
            let result = try await appleSync(harness)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let expected = truth(harness)
            #expect(expected.count > Set(expected.map(\.originalTransactionId)).count)
            try expectLedgerEqualsTruth(harness)
        }
    }

    @Test func theNextNightReadsOnlyNewRefundsFromStoredRevisions() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applenight", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let harness = JobHarness(stores: stores)
            #expect(try await appleSync(harness).exitCode == 0)
            simulator.clock.advance(millis: 86_400_000)
            let second = try await appleSync(harness)
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            try expectLedgerEqualsTruth(harness)
            // Only the customers named by the day's notifications were asked again.
            #expect((second.calls["apple.refundhistory"] ?? 0) < 200)
            let rerun = try await appleSync(harness)
            #expect(rerun.counts["inserted"] ?? 0 == 0)
        }
    }

    @Test func twoProcessesNeverAskForTheSameCustomerTwice() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "appletwo", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let harness = JobHarness(stores: stores)
            // Discovery alone first (queues customers), then two workers drain the queue at once.
            _ = try await appleJob(harness, named: "discover") { sync, _, environment in
                try await sync.run(.backfillIds([]), in: environment)
            }
            simulator.resetStatistics()
            let results = try await withThrowingTaskGroup(of: JobRunner.Result.self) { group in
                for worker in 0..<2 {
                    group.addTask {
                        try await appleJob(harness, named: "worker\(worker)") { sync, _, environment in
                            try await sync.run(.incremental, in: environment)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.allSatisfy { $0.exitCode == 0 })
            try expectLedgerEqualsTruth(harness)
            let asked = results.map { $0.counts["customers"] ?? 0 }
            let refunded = Set(truth(harness).map(\.originalTransactionId)).count
            #expect(asked.reduce(0, +) == refunded, "\(asked)")
        }
    }
}
