import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import Reconciler
import TestSupport
import Testing

@testable import Ledger

/// The one writer of `refund` on a real PostgreSQL: one row walked through every path of the amount rule, each
/// statement deciding as ``RefundAmountRule`` does.
@Suite struct RefundWriterTests {
    static let prices = ConfiguredPrices(["monthly": ["USD": 4990]])

    struct Amount: Equatable {
        var gross: Int64?
        var precision: Int?
        var source: String?
        var note: String?
        var unit: Int64?
    }

    static func amount(on connection: PostgresConnection) throws -> Amount {
        let row = try connection.query(
            "SELECT gross_amount, amount_precision, amount_source, amount_note, price_milli FROM refund")[0]
        return Amount(
            gross: try row.decodeIfPresent("gross_amount"), precision: try row.decodeIfPresent("amount_precision"),
            source: try row.decodeIfPresent("amount_source"), note: try row.decodeIfPresent("amount_note"),
            unit: try row.decodeIfPresent("price_milli"))
    }

    static func void(_ order: String, reason: Int, on connection: PostgresConnection) throws {
        let page = try VoidedPurchasesListResponse(
            json: Data(
                #"{"voidedPurchases":[{"purchaseToken":"token-A","orderId":"\#(order)","voidedTimeMillis":"1790000000000","voidedReason":\#(reason)}]}"#
                    .utf8))
        let records = RefundRecord.intake(page, receivedAt: Date(timeIntervalSince1970: 1_800_000_000)).records
        _ = try RefundLedger(appId: "droid", prices: prices).upsert(records, runId: nil, on: connection)
    }

    /// A monthly refund (USD 4.99 configured): estimated as it lands (4990 milli), estimated again when Google refuses
    /// the order, replaced whole by the store's USD 4.99 when it answers; then neither a refusal nor the voided row
    /// seen again (with a new reason) takes anything from the store's amount.
    @Test func theStoresAmountReplacesTheEstimateAndNothingReplacesIt() throws {
        let connection = try GoogleOrderStoreTests.database("ledger_writer")
        defer { connection.close() }
        try connection.execute(
            "INSERT INTO subscription (app_id, store_id, product_id, state) VALUES ('droid', 'token-A', 'monthly', 'active')"
        )
        var order = OrderHistoryBuilder(currency: "USD", total: "4.99", tax: "0.41", quantity: 1)
        order.fullRefund("4.99", tax: "0.41", at: 1_790_000_000_000)
        let store = GoogleOrderStore(appId: "droid", prices: Self.prices)
        let estimate = Amount(gross: 4990, precision: 3, source: "configured", note: nil, unit: 4990)

        try Self.void(order.orderId, reason: 0, on: connection)
        #expect(try Self.amount(on: connection) == estimate)
        try store.mark([order.orderId], status: .noPermission, on: connection)
        #expect(
            try Self.amount(on: connection)
                == Amount(gross: 4990, precision: 3, source: "configured", note: "no_permission", unit: 4990))

        _ = try GoogleOrderStoreTests.store(order, prices: Self.prices, on: connection)
        let stated = Amount(gross: 4_990_000_000, precision: 9, source: "store", note: nil, unit: nil)
        #expect(try Self.amount(on: connection) == stated)
        try store.mark([order.orderId], status: .noPermission, on: connection)
        #expect(try Self.amount(on: connection) == stated)
        try Self.void(order.orderId, reason: 1, on: connection)
        #expect(try Self.amount(on: connection) == stated)
        #expect(try connection.query("SELECT reason_code FROM refund")[0].decode("reason_code") as Int == 1)
    }
}
