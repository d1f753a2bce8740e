import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// One read per customer per night (issue 20): ids of one customer share one chain of refund history, a customer
/// read in a run is not read again that night unless a new notification names it, and a pending backfill's customers
/// are the backfill's, of which a nightly run takes at most `sync.appleBackfillPerNight`.
extension AppleRefundSyncTests {
    /// Customers of three purchases each, every purchase an Apple subscription of one app.
    static let customerSpec: ScenarioSpec = {
        var spec = ScenarioSpec(
            seed: 44, subscriptions: 1800, oneTimePurchases: 0, refunds: 240, historyDays: 120, futureDays: 5,
            sandboxShare: 0, maxRefundsPerPurchase: 3)
        spec.apps = [SimulatedApp.defaults[0]]
        spec.appleCustomerPlans = 3
        return spec
    }()

    /// The simulator's customer (its first purchase's plan) of an original transaction id: `customerPlans` consecutive
    /// purchases of the lone app (the rule ScenarioSpec.appleCustomerPlans documents).
    func customer(of originalTransactionId: String, spec: ScenarioSpec) -> Int {
        let plan = Int((Int64(originalTransactionId) ?? 0) - 2_000_000_000_000_000) / 1000
        return plan / spec.appleCustomerPlans * spec.appleCustomerPlans
    }

    /// The fewest Refund History calls that read every customer of `ids` whole: one chain per customer, one call per
    /// 20 refunds (at least one).
    func leastHistoryCalls(_ harness: JobHarness, customersOf ids: [String]) -> (customers: Int, calls: Int) {
        let spec = harness.stores.simulator.spec
        let customers = Set(ids.map { customer(of: $0, spec: spec) })
        var refunds: [Int: Int] = [:]
        let truth = harness.stores.simulator.groundTruth()
        for refund in truth.appleRefunds where refund.revocationDate <= truth.nowMillis {
            refunds[customer(of: refund.originalTransactionId, spec: spec), default: 0] += 1
        }
        let calls = customers.reduce(0) { $0 + max(1, ((refunds[$1] ?? 0) + 19) / 20) }
        return (customers.count, calls)
    }

    /// Refund History calls the simulator answered since its statistics were last reset.
    func historyCallsAnswered(_ simulator: StoreSimulator) -> Int {
        simulator.statistics().filter { $0.endpoint == .appleRefundHistory }.reduce(0) { $0 + $1.granted }
    }

    func knownIds(_ harness: JobHarness) throws -> [String] {
        try harness.connection().query("SELECT original_transaction_id FROM apple_refund_cursor")
            .map { try $0.decode("original_transaction_id") }
    }

    /// Every known subscription imported with its backend's user_ref, notifications naming refunded purchases, and a
    /// sweep large enough for everyone: the first night reads each customer once (within 1.2 x the least calls), and
    /// a second run the same night asks at most a tenth of that; the ledger equals the store's truth both times.
    @Test func aNightReadsEachCustomerOnceAndARerunTheSameNightAlmostNothing() async throws {
        var options = JobHarness.options(Self.customerSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applecust",
                extraYAML: "sync: { appleSweepCustomers: 100000, appleConcurrency: 2 }\n")
            try importSubscriptions(stores)
            let harness = JobHarness(stores: stores)
            simulator.resetStatistics()
            let first = try await appleSync(harness)
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            try expectLedgerEqualsTruth(harness)
            let firstCalls = historyCallsAnswered(simulator)
            let ids = try knownIds(harness)
            let least = leastHistoryCalls(harness, customersOf: ids)
            #expect(least.customers * 2 < ids.count, "customers of several purchases: \(least), \(ids.count) ids")
            #expect(firstCalls == first.calls["apple.refundhistory"], "\(first.calls)")
            #expect(firstCalls >= least.calls, "\(firstCalls) calls, least \(least)")
            #expect(Double(firstCalls) <= 1.2 * Double(least.calls), "\(firstCalls) calls, least \(least)")
            // The same night again: nothing is read twice.
            simulator.resetStatistics()
            let rerun = try await appleSync(harness)
            #expect(rerun.exitCode == 0, "\(rerun.error ?? "")")
            let rerunCalls = historyCallsAnswered(simulator)
            #expect(rerunCalls * 10 <= firstCalls, "rerun \(rerunCalls), first \(firstCalls)")
            try expectLedgerEqualsTruth(harness)
            print("apple customers: first run \(firstCalls), rerun \(rerunCalls), least \(least.calls) calls")
        }
    }

    /// No backend data at all: customers are learned from notifications alone, and the ids one customer's notifications
    /// name (one appTransactionId) share one chain of refund history.
    @Test func idsOfOneCustomerShareOneChainWithoutBackendData() async throws {
        var options = JobHarness.options(Self.customerSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applecustnb", extraYAML: Self.noSweep)
            let harness = JobHarness(stores: stores)
            let first = try await appleSync(harness)
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            try expectLedgerEqualsTruth(harness)
            let refunded = Set(truth(harness).map(\.originalTransactionId))
            let least = leastHistoryCalls(harness, customersOf: Array(refunded))
            // Several purchases of one customer were refunded: grouping saves calls.
            #expect(least.customers < refunded.count, "\(least), \(refunded.count) ids")
            let calls = first.calls["apple.refundhistory"] ?? 0
            #expect(calls >= least.calls && Double(calls) <= 1.2 * Double(least.calls), "\(calls), least \(least)")
            let heads: Int = try harness.connection().query(
                "SELECT count(*) AS n FROM apple_refund_cursor WHERE customer IS NULL")[0].decode("n")
            #expect(heads == least.customers)
        }
    }

    /// A backfill that stopped with customers left: `--status` counts them, the next nightly run takes only
    /// `sync.appleBackfillPerNight` of them, and `--cancel` drops the rest while keeping everything stored.
    @Test func aPendingBackfillGivesTheNightOnlyItsShareAndCanBeCanceled() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applebfshare",
                extraYAML: "sync: { appleSweepCustomers: 0, appleBackfillPerNight: 25 }\n")
            try importSubscriptions(stores)
            let harness = JobHarness(stores: stores)
            let app = stores.app(.apple)
            // The backfill queues every customer, then is stopped before reading any (as an interrupted one).
            let stopped = ShutdownSignal()
            stopped.request()
            let configuration = stores.configuration
            let interrupted = try await harness.runner(shutdown: stopped).run(
                job: AppleRefundSync.backfillJob, app: app, waitForLock: false
            ) { environment in
                let access = try StoreClients.apple(
                    for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
                try await AppleRefundSync(app: app, configuration: configuration, access: access)
                    .run(.backfillAll, in: environment)
            }
            #expect(interrupted.exitCode == 75, "\(interrupted.error ?? "")")
            let known: Int = try harness.connection().query(
                "SELECT count(*) AS n FROM subscription WHERE app_id = $1", [app.id])[0].decode("n")
            let pending = try #require(try AppleBackfillProgress.load(app: app.id, on: harness.connection()))
            #expect(pending.queued == known && pending.left == known && pending.done == 0, "\(pending)")
            // The nightly run: the notified customers, then 25 of the backfill's, no more.
            let night = try await appleSync(harness)
            #expect(night.exitCode == 0, "\(night.error ?? "")")
            #expect(night.counts["backfill_customers"] == 25, "\(night.counts)")
            let after = try #require(try AppleBackfillProgress.load(app: app.id, on: harness.connection()))
            #expect(after.left <= known - 25 && after.done >= 25 && after.finishedAt == nil, "\(after)")
            let stored = try stored(harness)
            // Cancel: the queue goes, what was stored stays, and the next night reads none of the backfill's.
            let dropped = try AppleBackfillProgress.cancel(app: app.id, on: harness.connection())
            #expect(dropped == after.left)
            let canceled = try #require(try AppleBackfillProgress.load(app: app.id, on: harness.connection()))
            #expect(canceled.left == 0 && canceled.canceledAt != nil && canceled.done == after.done, "\(canceled)")
            #expect(try self.stored(harness) == stored)
            let next = try await appleSync(harness)
            #expect(next.exitCode == 0, "\(next.error ?? "")")
            #expect(next.counts["backfill_customers"] == nil, "\(next.counts)")
        }
    }

    /// Nothing but the ids: a backfill of two refunded purchases of one customer reads the first, whose refund history
    /// returns the other's refunds too, so the other joins its customer and is not read again.
    @Test func idsWhoseHistoriesReturnEachOthersRefundsAreOneCustomer() async throws {
        var options = JobHarness.options(Self.customerSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applecustids",
                extraYAML: "sync: { appleSweepCustomers: 0, appleConcurrency: 1 }\n")
            let harness = JobHarness(stores: stores)
            let spec = simulator.spec
            // Refund History shows no reversal (only REFUND_REVERSED notifications do, and a backfill of ids reads
            // none): the customer is the first, in id order, of two refunded purchases or more and no reversal.
            let refunds = truth(harness)
            let reversed = Set(refunds.filter(\.reversed).map { customer(of: $0.originalTransactionId, spec: spec) })
            let byCustomer = Dictionary(grouping: Set(refunds.map(\.originalTransactionId))) {
                customer(of: $0, spec: spec)
            }
            let ids = try #require(
                byCustomer.sorted { $0.key < $1.key }.first { $0.value.count >= 2 && !reversed.contains($0.key) }
            ).value.sorted()
            let result = try await appleSync(harness, .backfillIds(ids))
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.calls["apple.refundhistory"] == 1, "\(result.calls)")
            let members: [String] = try harness.connection().query(
                "SELECT customer FROM apple_refund_cursor WHERE customer IS NOT NULL ORDER BY original_transaction_id"
            ).map { try $0.decode("customer") }
            #expect(members == Array(repeating: ids[0], count: ids.count - 1))
            #expect(try stored(harness) == truth(harness).filter { ids.contains($0.originalTransactionId) })
            let progress = try #require(
                try AppleBackfillProgress.load(app: stores.app(.apple).id, on: harness.connection()))
            #expect(progress.left == 0 && progress.finishedAt != nil, "\(progress)")
            // A member queued directly (as `quarantine retry` queues the id it retried) hands its place to its head:
            // the customer is read once more, and nothing stays queued.
            try harness.connection().execute(
                "UPDATE apple_refund_cursor SET queued_at = now(), queue_reason = 'quarantine_retry' WHERE customer IS NOT NULL"
            )
            let retry = try await appleSync(harness, .backfillIds([]))
            #expect(retry.exitCode == 0, "\(retry.error ?? "")")
            #expect(retry.calls["apple.refundhistory"] == 1, "\(retry.calls)")
            let queued: Int = try harness.connection().query(
                "SELECT count(*) AS n FROM apple_refund_cursor WHERE queued_at IS NOT NULL")[0].decode("n")
            #expect(queued == 0)
        }
    }
}
