import Foundation
import PlayDeveloperAPI
import Postgres
import Reconciler
import TestSupport
import Testing

@testable import Ledger

/// Issue 37 item 7: when the Orders API cannot price a refund, the configured price stands in, marked estimated
/// (`configured`), in the sale's currency as far as storerecon knows it: the subscription's or purchase's order it
/// fetched, else the product's only configured currency; never a guess between several.
@Suite struct ConfiguredEstimateTests {
    /// monthly: USD 4.99 only; yearly: USD 39.99 or EUR 36.99.
    static let prices = ConfiguredPrices(["monthly": ["USD": 4990], "yearly": ["USD": 39990, "EUR": 36990]])

    @Test func anEstimateIsInTheSalesCurrencyOrTheProductsOnlyOne() {
        #expect(Self.prices.estimate(of: "monthly", in: nil)! == ("USD", 4990))
        #expect(Self.prices.estimate(of: "yearly", in: "eur")! == ("EUR", 36990))
        // A sale in a currency without a price, or of a product with several and the currency unknown: none.
        #expect(Self.prices.estimate(of: "monthly", in: "JPY") == nil)
        #expect(Self.prices.estimate(of: "yearly", in: nil) == nil)
        #expect(Self.prices.estimate(of: "weekly", in: nil) == nil)
    }

    /// Voided rows stored, each of a known subscription, then the Orders API refuses them all (403):
    /// - A, monthly, 2 units: USD (its only price) x 2 = USD 9.98, estimated as the row lands;
    /// - E, yearly, whose subscription's current order was fetched in EUR: EUR 36.99 as it lands;
    /// - D, yearly, the renewal `GPA.D..1`, unknown as it lands; the purchase's first order `GPA.D` (EUR) is fetched
    ///   before the refusal: EUR 36.99 then;
    /// - C, yearly, nothing known of its currency: no amount, ever (USD or EUR would be a guess).
    @Test func aRefusedOrderIsEstimatedInTheSalesCurrencyWhereKnown() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "ledger_configured"))
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.executeScript(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid');
            INSERT INTO subscription (app_id, store_id, product_id, state, current_order_id)
            VALUES ('droid', 'token-A', 'monthly', 'active', NULL), ('droid', 'token-C', 'yearly', 'active', NULL),
                   ('droid', 'token-D', 'yearly', 'active', NULL), ('droid', 'token-E', 'yearly', 'active', 'GPA.E..3');
            INSERT INTO google_order (app_id, order_id, status, currency) VALUES ('droid', 'GPA.E..3', 'ok', 'EUR');
            """)
        let page = try VoidedPurchasesListResponse(
            json: Data(
                """
                {"voidedPurchases":[
                 {"purchaseToken":"token-A","orderId":"GPA.A","voidedTimeMillis":"1790000000000","voidedQuantity":2},
                 {"purchaseToken":"token-C","orderId":"GPA.C","voidedTimeMillis":"1790000000000"},
                 {"purchaseToken":"token-D","orderId":"GPA.D..1","voidedTimeMillis":"1790000000000"},
                 {"purchaseToken":"token-E","orderId":"GPA.E..1","voidedTimeMillis":"1790000000000"}]}
                """.utf8))
        let intake = RefundRecord.intake(page, receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        _ = try RefundLedger(appId: "droid", prices: Self.prices).upsert(intake.records, runId: nil, on: connection)
        let landed = try Self.amounts(on: connection)
        #expect(landed["GPA.A"]! == Amount(gross: 9980, currency: "USD", source: "configured", note: nil))
        #expect(landed["GPA.E..1"]! == Amount(gross: 36990, currency: "EUR", source: "configured", note: nil))
        #expect(landed["GPA.D..1"]! == Amount(gross: nil, currency: nil, source: nil, note: "no_configured_price"))
        #expect(landed["GPA.C"]! == Amount(gross: nil, currency: nil, source: nil, note: "no_configured_price"))

        try connection.execute(
            "INSERT INTO google_order (app_id, order_id, status, currency) VALUES ('droid', 'GPA.D', 'ok', 'EUR')")
        try GoogleOrderStore(appId: "droid", prices: Self.prices).mark(
            ["GPA.A", "GPA.C", "GPA.D..1", "GPA.E..1"], status: .noPermission, on: connection)
        let refused = try Self.amounts(on: connection)
        #expect(refused["GPA.A"]! == Amount(gross: 9980, currency: "USD", source: "configured", note: "no_permission"))
        #expect(
            refused["GPA.D..1"]! == Amount(gross: 36990, currency: "EUR", source: "configured", note: "no_permission"))
        #expect(
            refused["GPA.E..1"]! == Amount(gross: 36990, currency: "EUR", source: "configured", note: "no_permission"))
        #expect(refused["GPA.C"]! == Amount(gross: nil, currency: nil, source: nil, note: "no_permission"))
        #expect(
            try connection.query("SELECT price_milli FROM refund WHERE order_id = 'GPA.D..1'")[0].decode("price_milli")
                as Int64 == 36990)
    }

    struct Amount: Equatable {
        var gross: Int64?
        var currency: String?
        var source: String?
        var note: String?
    }

    static func amounts(on connection: PostgresConnection) throws -> [String: Amount] {
        var amounts: [String: Amount] = [:]
        for row in try connection.query(
            "SELECT order_id, gross_amount, currency, amount_source, amount_note FROM refund WHERE app_id = 'droid'")
        {
            amounts[try row.decode("order_id")] = Amount(
                gross: try row.decodeIfPresent("gross_amount"), currency: try row.decodeIfPresent("currency"),
                source: try row.decodeIfPresent("amount_source"), note: try row.decodeIfPresent("amount_note"))
        }
        return amounts
    }
}
