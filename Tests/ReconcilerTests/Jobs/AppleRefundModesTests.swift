import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// The Apple refund job's other ways in: `--dry-run`, `backfill --all`, `backfill --ids`, a refused pagination
/// token during discovery, and a refused revision of a customer's refund history.
extension AppleRefundSyncTests {
    static let smallSpec = ScenarioSpec(
        seed: 33, subscriptions: 3000, oneTimePurchases: 0, refunds: 300, historyDays: 90, futureDays: 5,
        sandboxShare: 0)
    static let noSweep = "sync: { appleSweepCustomers: 0 }\n"

    func count(_ harness: JobHarness, _ table: String) throws -> Int {
        let sql: String
        switch table {
        case "refund": sql = "SELECT count(*) AS n FROM refund"
        case "cursor": sql = "SELECT count(*) AS n FROM apple_refund_cursor"
        default: sql = "SELECT count(*) AS n FROM sync_checkpoint"
        }
        return try harness.connection().query(sql)[0].decode("n")
    }

    /// Loads the scenario's subscriptions the way an operator would (`storerecon import subscriptions`).
    func importSubscriptions(_ stores: SimulatedStores) throws {
        let csv = stores.directory.appendingPathComponent("subscriptions.csv")
        try SubscriptionExport.write(stores.simulator.spec, to: csv)
        let connection = try PostgresConnection(conninfo: stores.conninfo)
        defer { connection.close() }
        _ = try SubscriptionImporter(connection: connection, knownApps: Set(stores.configuration.apps.map(\.id)))
            .importFile(path: csv.path, skipInvalid: false)
    }

    @Test func aDryRunAsksTheStoreAndWritesNothing() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "appledry", extraYAML: Self.noSweep)
            let harness = JobHarness(stores: stores)
            let result = try await appleSync(harness, dryRun: true)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect((result.calls["apple.notificationhistory"] ?? 0) > 0)
            #expect((result.counts["would_insert"] ?? 0) > 0, "\(result.counts)")
            #expect(try count(harness, "refund") == 0)
            #expect(try count(harness, "cursor") == 0)
            #expect(try count(harness, "checkpoint") == 0)
            // The real run afterwards stores what the dry run announced, and more (the refund histories).
            #expect(try await appleSync(harness).exitCode == 0)
            try expectLedgerEqualsTruth(harness)
        }
    }

    @Test func backfillAllReadsEveryKnownCustomerWithoutDiscovery() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "appleall", extraYAML: Self.noSweep)
            let harness = JobHarness(stores: stores)
            try importSubscriptions(stores)
            let app = stores.app(.apple).id
            let customers: Int = try harness.connection().query(
                "SELECT count(*) AS n FROM subscription WHERE app_id = $1", [app])[0].decode("n")
            try #require(customers > 1000)
            let result = try await appleSync(harness, .backfillAll)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.calls["apple.notificationhistory"] == nil, "a backfill does not page notifications")
            // Every known customer asked once, and the ledger equals the truth for them, except reversals: Refund
            // History still lists a reversed refund and says nothing of the reversal, which only REFUND_REVERSED
            // notifications (the nightly discovery) tell.
            #expect((result.calls["apple.refundhistory"] ?? 0) >= customers)
            let known = Set(
                try harness.connection().query("SELECT store_id FROM subscription WHERE app_id = $1", [app])
                    .map { try $0.decode("store_id", as: String.self) })
            let expected = Set(
                truth(harness).filter { known.contains($0.originalTransactionId) }.map { refund in
                    var unreversed = refund
                    unreversed.reversed = false
                    return unreversed
                })
            #expect(!expected.isEmpty)
            let actual = try stored(harness)
            #expect(
                actual == expected,
                "missing \(Array(expected.subtracting(actual).prefix(2))), extra \(Array(actual.subtracting(expected).prefix(2)))"
            )
            // Resumable and idempotent: a second backfill finds every customer done at its stored revision.
            let again = try await appleSync(harness, .backfillAll)
            #expect(again.exitCode == 0)
            #expect((again.counts["inserted"] ?? 0) == 0)
            #expect(try stored(harness) == expected)
        }
    }

    @Test func backfillIdsReadsOnlyTheListedCustomers() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "appleids", extraYAML: Self.noSweep)
            let harness = JobHarness(stores: stores)
            let chosen = Set(truth(harness).map(\.originalTransactionId).sorted().prefix(7))
            try #require(chosen.count == 7)
            let dry = try await appleSync(harness, .backfillIds(Array(chosen)), dryRun: true)
            #expect(dry.exitCode == 0, "\(dry.error ?? "")")
            #expect((dry.calls["apple.refundhistory"] ?? 0) >= 7, "a dry run asks the listed customers")
            #expect((dry.counts["would_insert"] ?? 0) > 0, "\(dry.counts)")
            #expect(try count(harness, "refund") == 0)
            #expect(try count(harness, "cursor") == 0)
            let result = try await appleSync(harness, .backfillIds(Array(chosen)))
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.calls["apple.notificationhistory"] == nil)
            #expect((result.calls["apple.refundhistory"] ?? 0) >= 7)
            #expect((result.calls["apple.refundhistory"] ?? 0) <= 14)
            #expect(try stored(harness) == truth(harness).filter { chosen.contains($0.originalTransactionId) })
        }
    }

    @Test func aRefusedRevisionIsReadAgainFromTheStartOnce() async throws {
        var options = JobHarness.options(Self.smallSpec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "applerev", extraYAML: Self.noSweep)
            let harness = JobHarness(stores: stores)
            let chosen = Array(Set(truth(harness).map(\.originalTransactionId)).sorted().prefix(5))
            try #require(chosen.count == 5)
            let first = try await appleSync(harness, .backfillIds(chosen))
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            let revisionsSQL = "SELECT original_transaction_id AS id, revision FROM apple_refund_cursor ORDER BY 1"
            func revisions() throws -> [String] {
                try harness.connection().query(revisionsSQL).map { row in
                    let (id, revision): (String, String?) = (try row.decode("id"), try row.decodeIfPresent("revision"))
                    return "\(id) \(revision ?? "-")"
                }
            }
            let read = try revisions()
            try #require(read.count == 5 && !read.contains { $0.hasSuffix(" -") }, "\(read)")
            // Revisions Apple no longer takes (4000005): each customer is read again from the start, to the same end.
            _ = try harness.connection().execute(
                "UPDATE apple_refund_cursor SET revision = 'spoiled' WHERE revision IS NOT NULL")
            let again = try await appleSync(harness, .backfillIds(chosen))
            #expect(again.exitCode == 0, "\(again.error ?? "")")
            #expect(again.counts["customer_errors"] == nil, "\(again.counts)")
            // One refused call per customer, then its history from the start, as the first run read it.
            let firstCalls = first.calls["apple.refundhistory"] ?? 0
            #expect(again.calls["apple.refundhistory"] == firstCalls + 5, "\(again.calls)")
            #expect(try revisions() == read)
            #expect(try stored(harness) == truth(harness).filter { chosen.contains($0.originalTransactionId) })
        }
    }

    @Test func anExpiredNotificationTokenIsAClearErrorAndProgressIsKept() async throws {
        var options = JobHarness.options(AppleRefundSyncTests.spec)
        JobHarness.unlimited(&options)
        options.faults[.appleNotificationHistory] = FaultSettings(rates: [.expiredPageToken: 1])
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "appletok", extraYAML: Self.noSweep)
            let harness = JobHarness(stores: stores)
            let first = try await appleSync(harness)
            #expect(first.exitCode != 0)
            #expect(
                first.error?.contains("4000017") == true || first.error?.contains("token") == true,
                "\(first.error ?? "")")
            // What was stored before the refusal is right, and kept.
            let kept = try stored(harness)
            #expect(!kept.isEmpty, "the first page of each window was stored")
            // (A reversal may still be unseen: its notifications come last.)
            let truthIds = Set(truth(harness).map(\.transactionId))
            #expect(kept.allSatisfy { truthIds.contains($0.transactionId) })
            simulator.clearFaults()
            let rerun = try await appleSync(harness)
            #expect(rerun.exitCode == 0, "\(rerun.error ?? "")")
            try expectLedgerEqualsTruth(harness)
        }
    }
}
