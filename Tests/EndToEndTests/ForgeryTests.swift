import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// The built binary against an Apple store that serves forged payloads (bad signatures, another bundle id, a chain
/// to a root storerecon does not trust) on every endpoint: the nightly run says why it refused them, exits 1, and
/// stores nothing of Apple's, while Google's refunds still land. Once the store is honest, the next run stores all.
@Suite("forged Apple payloads, end to end", .serialized)
struct ForgeryTests {
    static let appleEndpoints: [SimulatorEndpoint] = [
        .appleNotificationHistory, .appleRefundHistory, .appleSubscriptionStatuses, .appleTransactionHistory,
    ]

    /// What storerecon keeps of Apple's data: ledger rows, reversals, the Apple subscriptions' state and transitions.
    func appleState(_ stores: SimulatedStores) throws -> [String] {
        try PostgresConnection(conninfo: stores.conninfo).query(
            """
            SELECT 'refund ' || order_id || ' ' || payload::text AS line FROM refund WHERE platform = 'apple'
            UNION ALL SELECT 'reversal ' || r::text FROM apple_refund_reversal r
            UNION ALL SELECT 'subscription ' || concat_ws(' ', s.store_id, s.product_id, s.state, s.store_state,
                                                          s.entitled, s.expires_at)
            FROM subscription s JOIN app a ON a.id = s.app_id WHERE a.platform = 'apple'
            UNION ALL SELECT 'transition ' || t.subscription_id || ' ' || t.new_state
            FROM subscription_transition t JOIN subscription s ON s.id = t.subscription_id
            JOIN app a ON a.id = s.app_id WHERE a.platform = 'apple'
            ORDER BY 1
            """
        ).map { try $0.decode("line") }
    }

    @Test(arguments: [[FaultKind.badSignature], [.wrongBundleId], [.badSignature, .wrongBundleId]])
    func forgedPayloadsAreRefusedWithTheirReasonAndNothingIsStored(_ faults: [FaultKind]) async throws {
        var options = NightlyRunTests.options()
        options.scenario.subscriptions = 1500
        options.scenario.refunds = 200
        // Every call is forged; with two kinds, the endpoints take turns.
        for (index, endpoint) in Self.appleEndpoints.enumerated() {
            options.faults[endpoint] = FaultSettings(rates: [faults[index % faults.count]: 1])
        }
        try await StoreSimulator.withRunning(options) { simulator in
            // The backend's subscriptions are known and the sweep asks every one of them, so each endpoint is reached
            // even when discovery finds no customer (all its notifications forged): refund history by the sweep,
            // subscription statuses by the recheck. The simulator's Refund History limit is lifted, and storerecon's
            // with it, so the sweep takes seconds.
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "forged",
                extraYAML: """
                    sync: { appleSweepCustomers: 100000 }
                    limits: { demo-ios: { refundHistoryPerSecond: 1000 } }

                    """)
            let binary = try BuiltExecutable("storerecon")
            let csv = stores.directory.appendingPathComponent("subscriptions.csv")
            try SubscriptionExport.write(simulator.spec, to: csv)
            let imported = try await binary.run(["import", "subscriptions", csv.path, "--config", stores.configPath])
            #expect(imported.status == 0, "\(imported.stderr.suffix(1500))")
            let before = try appleState(stores)
            let outcome = try await binary.run(["run", "nightly", "--config", stores.configPath])
            #expect(outcome.status == 1, "\(outcome.stderr.suffix(2000))")
            #expect(try appleState(stores) == before, "a forged payload was stored")
            let reasons = faults.map { $0 == .badSignature ? "invalidSignature" : "bundleIdMismatch" }
            for reason in reasons {
                #expect(outcome.stderr.contains(reason), "the log does not name \(reason)")
            }
            #expect(outcome.stderr.contains("failed verification and were not stored"))
            // The voided list's rows (the first night also finds refunds Google made without revoking them, of the
            // current orders the recheck learnt: those are not in the voided list's truth).
            let google = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT count(*) AS n FROM refund WHERE platform = 'google' AND revoked")[0].decode("n", as: Int.self)
            #expect(google == NightlyRunTests().truthCounts(simulator).google)

            simulator.clearFaults()
            let honest = try await binary.run(["run", "nightly", "--config", stores.configPath])
            #expect(honest.status == 0, "\(honest.stderr.suffix(2000))")
            let apple = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT count(*) AS n FROM refund WHERE platform = 'apple'")[0].decode("n", as: Int.self)
            #expect(apple == NightlyRunTests().truthCounts(simulator).apple)
        }
    }

    @Test func aChainToAnUntrustedRootIsRefusedAndNothingIsStored() async throws {
        var options = NightlyRunTests.options()
        options.scenario.subscriptions = 1500
        options.scenario.refunds = 200
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "forgedroot", extraYAML: NightlyRunTests.extra)
            let root = try #require(stores.app(.apple).rootCertificates.first)
            try Data(try SigningChain.generate().rootDER).write(to: URL(fileURLWithPath: root))
            let before = try appleState(stores)
            let outcome = try await BuiltExecutable("storerecon").run(
                ["sync", "apple-refunds", "--config", stores.configPath])
            #expect(outcome.status == 1, "\(outcome.stderr.suffix(2000))")
            #expect(outcome.stderr.contains("invalidCertificateChain"), "\(outcome.stderr.suffix(2000))")
            #expect(try appleState(stores) == before)
        }
    }
}
