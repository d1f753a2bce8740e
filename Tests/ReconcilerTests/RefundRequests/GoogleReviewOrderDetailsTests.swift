import Foundation
import PlayDeveloperAPI
import Postgres
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

/// What a Google refund review's order says of its purchase: the purchase token (the facts' and the earlier refunds'
/// key), the kind, the period, and the customer's first purchase (the rules' `tenureDaysAtLeast`), whether the order
/// is read from Google or from what the ledger stored of it.
@Suite("GoogleReviewOrder: the purchase behind a review")
struct GoogleReviewOrderDetailsTests {
    static func order(_ json: String) throws -> PlayOrder {
        try JSONDecoder().decode(PlayOrder.self, from: Data(json.utf8))
    }

    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    /// A subscription renewal, as Google's Orders API sends it.
    static let renewal = """
        {"orderId": "GPA.3301-0000-0000-00001..3", "purchaseToken": "token-stored", "state": "PROCESSED",
         "createTime": "2026-11-01T08:00:00Z", "buyerAddress": {"buyerCountry": "de"},
         "total": {"currencyCode": "eur", "units": "4", "nanos": 990000000},
         "lineItems": [{"productId": "premium.monthly", "subscriptionDetails": {"basePlanId": "monthly",
             "servicePeriodStartTime": "2026-11-01T08:00:00Z", "servicePeriodEndTime": "2026-12-01T08:00:00Z"}}]}
        """

    /// The first order of the subscription `renewal` renews: bought 400 days before the renewal.
    static let firstOrder = """
        {"orderId": "GPA.3301-0000-0000-00001", "purchaseToken": "token-stored", "state": "PROCESSED",
         "createTime": "2025-09-27T08:00:00Z", "buyerAddress": {"buyerCountry": "DE"},
         "lineItems": [{"productId": "premium.monthly", "subscriptionDetails": {"basePlanId": "monthly",
             "servicePeriodStartTime": "2025-09-27T08:00:00Z", "servicePeriodEndTime": "2025-10-27T08:00:00Z"}}]}
        """

    @Test func aRenewalNamesItsFirstOrderAndAnyOtherOrderIsItsOwnFirstPurchase() throws {
        let renewal = GoogleReviewOrder(try Self.order(Self.renewal))
        #expect(renewal.firstOrderId == "GPA.3301-0000-0000-00001")
        #expect(renewal.firstPurchasedAt == nil, "known once the first order is read")
        #expect(renewal.productType == "subscription" && renewal.purchaseToken == "token-stored")
        #expect(renewal.country == "DE" && renewal.currency == "EUR" && renewal.priceNanos == 4_990_000_000)
        #expect(renewal.purchasedAt == Self.date("2026-11-01T08:00:00Z"))
        #expect(renewal.expiresAt == Self.date("2026-12-01T08:00:00Z"))

        let first = GoogleReviewOrder(try Self.order(Self.firstOrder))
        #expect(first.firstOrderId == nil)
        #expect(first.firstPurchasedAt == Self.date("2025-09-27T08:00:00Z"))

        let coins = GoogleReviewOrder(
            try Self.order(
                """
                {"orderId": "GPA.3301-0000-0000-00002", "createTime": "2026-11-20T10:00:00Z",
                 "lineItems": [{"productId": "coins.100", "oneTimePurchaseDetails": {"quantity": 1}}]}
                """))
        #expect(coins.productType == "one_time" && coins.firstOrderId == nil)
        #expect(coins.firstPurchasedAt == Self.date("2026-11-20T10:00:00Z"))

        #expect(GoogleReviewOrder.firstOrderId(of: "GPA.1234-5678-9012-34567..0") == "GPA.1234-5678-9012-34567")
        #expect(GoogleReviewOrder.firstOrderId(of: "GPA.1234-5678-9012-34567..12") == "GPA.1234-5678-9012-34567")
        for id in ["GPA.1234-5678-9012-34567", "GPA.1234-5678-9012-34567..", "GPA.1234..x", "GPA.1..2a"] {
            #expect(GoogleReviewOrder.firstOrderId(of: id) == nil, "\(id)")
        }
    }

    /// `body` with the simulator of `spec` running, its Google app reading its reviews (rules: `no_answer`, so that
    /// nothing is sent) and a connection to the test's database.
    static func withGoogleApp(
        _ spec: ScenarioSpec, database: String,
        _ body: (SimulatedStores, AppConfig, PostgresConnection) async throws -> Void
    ) async throws {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: database)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            var app = stores.app(.google)
            app.rtdnSubscription = simulator.rtdnSubscription(app: app.id)
            app.pubsubBaseURL = simulator.baseURL.absoluteString
            app.refundRequests = RefundRequestRules(fallback: .noAnswer)
            try await body(stores, app, connection)
        }
    }

    /// The ledger's renewal order and its first order (`google_order`), an earlier refund of the subscription, a
    /// review of the renewal received at `received`, and the backend's facts keyed by the purchase token.
    static func storeOrderRequestAndFacts(app: String, received: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO google_order (app_id, order_id, status, payload)
            VALUES ($1, 'GPA.3301-0000-0000-00001..3', 'ok', $2::json), ($1, 'GPA.3301-0000-0000-00001', 'ok', $3::json)
            """, [app, Self.renewal, Self.firstOrder])
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, original_id, refunded_at, refund_type, payload)
            VALUES ($1, 'google', 'GPA.3301-0000-0000-00001..1', 'token-stored', '2026-09-02T00:00:00Z', 'full', '{}')
            """, [app])
        try connection.execute(
            """
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, pending_token, received_at,
                                        deadline)
            VALUES ($1, 'google', 'm-1', 'GPA.3301-0000-0000-00001..3', 'prt-1', $2, $3)
            """, [app, received, received.addingTimeInterval(86_400)])
        _ = try ConsumptionFactStore.upsert(
            [
                ConsumptionFactRow(
                    platform: .google, purchaseId: "token-stored",
                    facts: ConsumptionFacts(
                        customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 10_000,
                        sampleContentProvided: false, asOf: received))
            ], on: connection)
    }

    /// A review of an order the ledger stored (`google_order`, written by the voided sync's pricing): described from
    /// the stored order without a call, whole: the purchase token finds the facts the backend keyed by it and the
    /// customer's earlier refund, and the first order gives the tenure.
    @Test func anOrderTheLedgerStoredIsDescribedWholeWithoutACall() async throws {
        var spec = ScenarioSpec(seed: 43, subscriptions: 20, oneTimePurchases: 10, refunds: 2, historyDays: 30)
        spec.refundReviews = 0
        try await Self.withGoogleApp(spec, database: "reviewdetails") { stores, app, connection in
            let received = Self.date("2026-11-20T08:00:00Z")
            try Self.storeOrderRequestAndFacts(app: app.id, received: received, on: connection)
            #expect(try await GoogleReviewOrdersTests.run(stores, app, at: received.addingTimeInterval(600)) == 0)
            let row = try #require(
                try connection.query(
                    """
                    SELECT original_id, product_type, product_id, country, purchased_at, expires_at, first_purchased_at,
                           answer, preference, facts::text AS facts
                    FROM refund_request WHERE request_id = 'm-1'
                    """
                ).first)
            #expect(try row.decodeIfPresent("original_id", as: String.self) == "token-stored")
            #expect(try row.decodeIfPresent("product_type", as: String.self) == "subscription")
            #expect(try row.decodeIfPresent("country", as: String.self) == "DE")
            #expect(try row.decodeIfPresent("purchased_at", as: Date.self) == Self.date("2026-11-01T08:00:00Z"))
            #expect(try row.decodeIfPresent("expires_at", as: Date.self) == Self.date("2026-12-01T08:00:00Z"))
            #expect(try row.decodeIfPresent("first_purchased_at", as: Date.self) == Self.date("2025-09-27T08:00:00Z"))
            // Decided with the facts keyed by the purchase token (not no_facts), 419 days of tenure, 1 earlier refund.
            #expect(try row.decodeIfPresent("answer", as: String.self) == nil)
            #expect(try row.decodeIfPresent("preference", as: String.self) == "no_answer")
            let facts = try #require(try row.decodeIfPresent("facts", as: String.self))
            let recorded = try #require(try JSONSerialization.jsonObject(with: Data(facts.utf8)) as? [String: Any])
            let figures = try #require(recorded["figures"] as? [String: Any])
            #expect(figures["tenureDays"] as? Int == 419)
            #expect(figures["priorRefunds"] as? Int == 1)
            #expect(figures["periodUsedMilli"] as? Int == 63_333)
        }
    }

    /// Reviews of subscription renewals read from Google: each renewal's first order is read in the same
    /// `orders.batchget` as the reviews' orders, and dates the customer's first purchase.
    @Test func aRenewalsFirstOrderIsReadInTheSameCall() async throws {
        var spec = ScenarioSpec(
            seed: 47, subscriptions: 200, oneTimePurchases: 20, refunds: 4, historyDays: 150, futureDays: 1)
        spec.refundReviews = 20
        try await Self.withGoogleApp(spec, database: "reviewfirst") { stores, app, connection in
            let anchor = Date(timeIntervalSince1970: Double(spec.anchorMillis) / 1000)
            #expect(try await GoogleReviewOrdersTests.run(stores, app, at: anchor) == 1)
            let rows = try connection.query(
                """
                SELECT transaction_id, purchased_at, first_purchased_at FROM refund_request
                WHERE order_read_at IS NOT NULL
                """)
            // Two of the twenty came 25 hours before: missed, their orders not read.
            #expect(rows.count == 18)
            var renewals = 0
            for row in rows {
                let id: String = try row.decode("transaction_id")
                let purchased = try #require(try row.decodeIfPresent("purchased_at", as: Date.self), "\(id)")
                let first = try #require(try row.decodeIfPresent("first_purchased_at", as: Date.self), "\(id)")
                if GoogleReviewOrder.firstOrderId(of: id) != nil {
                    renewals += 1
                    #expect(first < purchased, "\(id): the first order came before the renewal")
                } else {
                    #expect(first == purchased, "\(id)")
                }
            }
            #expect(renewals > 0)
        }
    }
}
