import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

/// Google's refund reviews in process against the simulator: each request's order read once (product, country and
/// price for the rules and the report), the usage evidence sent and then gone, and Google's decision read once the
/// review is over: from the ledger when it has the order voided, else from the order.
@Suite("GoogleReviewOrders against the simulator")
struct GoogleReviewOrdersTests {
    struct Row {
        var id: Int64
        var orderId: String
        var product: String?
        var country: String?
        var rule: String?
        var decision: String?
    }

    static func rows(_ connection: PostgresConnection) throws -> [Row] {
        try connection.query(
            "SELECT id, transaction_id, product_id, country, rule, decision FROM refund_request ORDER BY id"
        ).map {
            Row(
                id: try $0.decode("id"), orderId: try $0.decode("transaction_id"),
                product: try $0.decodeIfPresent("product_id"), country: try $0.decodeIfPresent("country"),
                rule: try $0.decodeIfPresent("rule"), decision: try $0.decodeIfPresent("decision"))
        }
    }

    static func count(_ connection: PostgresConnection, _ sql: String) throws -> Int {
        try connection.query(sql)[0].decode("n")
    }

    /// The order reads so far (`orders.get` / `batchget`; the simulator counts `orders.reviewrefund` apart).
    static func orderReads(_ simulator: StoreSimulator) -> Int {
        simulator.statistics().filter { $0.endpoint == .googleOrders }.map(\.granted).reduce(0, +)
    }

    /// One `run refund-requests` of the Google app at `now`; the orders it read (`orders.get` / `batchget` calls).
    static func run(_ stores: SimulatedStores, _ app: AppConfig, at now: Date) async throws -> Int {
        let before = orderReads(stores.simulator)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let runner = JobRunner(
            configuration: stores.configuration, gate: JobHarness(stores: stores).gate, shutdown: ShutdownSignal(),
            dryRun: false, quiet: true, logger: logger, now: { now })
        let result = try await runner.run(job: AppleRefundRequests.job, app: app, waitForLock: false) { environment in
            let play = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
            let pubsub = try StoreClients.pubsub(for: app, gate: environment.gate, logger: environment.logger)
            try await GoogleRefundRequests(app: app, play: play, pubsub: pubsub).run(in: environment)
        }
        #expect(result.exitCode == 0, "\(result.error ?? "")")
        return orderReads(stores.simulator) - before
    }

    @Test func ordersAreReadOnceRulesUseThemEvidenceIsSentAndGoneAndOutcomesFollowTheReview() async throws {
        var spec = ScenarioSpec(
            seed: 41, subscriptions: 80, oneTimePurchases: 60, refunds: 20, historyDays: 60, futureDays: 1)
        spec.refundReviews = 6
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "revieworders")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            var app = stores.app(.google)
            app.rtdnSubscription = simulator.rtdnSubscription(app: app.id)
            app.pubsubBaseURL = simulator.baseURL.absoluteString
            let anchor = Date(timeIntervalSince1970: Double(spec.anchorMillis) / 1000)

            // 1. The reviews are pulled; their orders are read in one call, before any decision.
            #expect(try await Self.run(stores, app, at: anchor) == 1)
            let pulled = try Self.rows(connection)
            #expect(pulled.count == 6)
            #expect(pulled.allSatisfy { $0.product != nil && $0.country?.count == 2 })
            #expect(
                try Self.count(
                    connection,
                    """
                    SELECT count(*)::int AS n FROM refund_request
                    WHERE price_nanos > 0 AND currency ~ '^[A-Z]{3}$' AND original_id IS NOT NULL
                    """) == 6)
            // The customer's first purchase: an order's own, or a renewal's first order's.
            #expect(
                try Self.count(
                    connection,
                    """
                    SELECT count(*)::int AS n FROM refund_request
                    WHERE first_purchased_at <= purchased_at
                      AND (first_purchased_at < purchased_at) = (transaction_id LIKE '%..%')
                    """) == 6)

            // 2. With facts, rules on products and countries, and usage evidence for the first order.
            try await Self.answer(stores, &app, pulled: pulled, at: anchor, on: connection)

            // 3. Once the reviews are over: the ledger's void, the order's refund, and declines.
            try await Self.decide(stores, app, pulled: pulled, anchor: anchor, on: connection)
        }
    }
}
