import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import Reconciler
import TestSupport
import Testing

@testable import Ledger

/// The order store on a real PostgreSQL: voided rows land, the Orders API's answer prices them, and the ledger's
/// totals per order are what the order's history refunded, however often the answer is stored.
@Suite struct GoogleOrderStoreTests {
    static let t0: Int64 = 1_790_000_000_000

    static func database(_ prefix: String) throws -> PostgresConnection {
        try sessions(prefix).1
    }

    /// Stores voided rows of `order` (`units` nil: the whole order) as a voided page would.
    static func void(
        _ order: OrderHistoryBuilder, _ rows: [(units: Int?, millis: Int64)],
        prices: ConfiguredPrices = ConfiguredPrices(),
        on connection: PostgresConnection
    ) throws {
        let records = try voided(order, rows)
        _ = try connection.transaction { connection in
            try RefundLedger(appId: "droid", prices: prices).upsert(records, runId: nil, on: connection)
        }
    }

    /// The ledger's records of the order's voided rows.
    static func voided(_ order: OrderHistoryBuilder, _ rows: [(units: Int?, millis: Int64)]) throws -> [RefundRecord] {
        let json = rows.map { row in
            #"{"purchaseToken":"token-\#(order.orderId)","orderId":"\#(order.orderId)","voidedTimeMillis":"\#(row.millis)""#
                + (row.units.map { #","voidedQuantity":\#($0)}"# } ?? "}")
        }
        let page = try VoidedPurchasesListResponse(
            json: Data(#"{"voidedPurchases":[\#(json.joined(separator: ","))]}"#.utf8))
        let intake = RefundRecord.intake(page, receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(intake.quarantined.isEmpty)
        return intake.records
    }

    static func store(
        _ order: OrderHistoryBuilder, prices: ConfiguredPrices = ConfiguredPrices(), on connection: PostgresConnection
    ) throws -> GoogleOrderStore.Stored {
        try GoogleOrderStore(appId: "droid", prices: prices).store(
            [try order.order()], payloads: [String(decoding: try order.json(), as: UTF8.self)], runId: nil,
            logger: Logger(label: "test"), on: connection)
    }

    /// Refunded nanos per row, and the order's sum, as the ledger holds them (store amounts only).
    static func ledger(_ orderId: String, on connection: PostgresConnection) throws -> [(
        kind: String, gross: Int64?, revoked: Bool
    )] {
        try connection.query(
            """
            SELECT refund_type, gross_amount, revoked FROM refund WHERE order_id = $1 ORDER BY refunded_at, id
            """, [orderId]
        ).map { (try $0.decode("refund_type"), try $0.decodeIfPresent("gross_amount"), try $0.decode("revoked")) }
    }

    /// Items 1 and 3 together, stored twice: GBP 6.93 for 7 units; a goodwill refund of 0.50 by amount, 2 units
    /// (1.98), then the rest in full. The rest is 6.93 - 0.50 - 1.98 = 4.45; the ledger adds up to 6.93 exactly,
    /// the goodwill refund is a row of its own, and storing the answer again changes nothing.
    @Test func anOrdersRefundsAddUpToWhatItRefundedAndAStoreAgainChangesNothing() throws {
        let connection = try Self.database("ledger_orders")
        defer { connection.close() }
        var order = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        order.partial("0.50", tax: "0.083", created: Self.t0 - 60_000)
        order.partial("1.98", tax: "0.33", created: Self.t0 + 2000)
        order.fullRefund("6.93", tax: "1.155", at: Self.t0 + 600_000)
        try Self.void(order, [(2, Self.t0), (nil, Self.t0 + 599_000)], on: connection)
        let stored = try Self.store(order, on: connection)
        #expect(stored.priced == 2 && stored.overRefunded == 0)
        let rows = try Self.ledger(order.orderId, on: connection)
        #expect(rows.map(\.gross) == [500_000_000, 1_980_000_000, 4_450_000_000])
        #expect(rows.map(\.kind) == ["partial_amount", "partial_quantity", "full"])
        #expect(rows.map(\.revoked) == [false, true, true])
        _ = try Self.store(order, on: connection)
        let again = try Self.ledger(order.orderId, on: connection)
        #expect(again.map(\.gross) == rows.map(\.gross) && again.count == 3)
    }

    /// The voided rows of a priced order seen again (the next night's overlap, a rerun, a backfill): the goodwill
    /// refund the answer recorded beside them stays, and the order is not asked again (it used to be dropped, and
    /// nothing put it back).
    @Test func aVoidedRowSeenAgainKeepsTheGoodwillRefundBesideIt() throws {
        let connection = try Self.database("ledger_goodwill")
        defer { connection.close() }
        var order = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        order.partial("0.50", tax: "0.083", created: Self.t0 - 60_000)
        order.partial("1.98", tax: "0.33", created: Self.t0 + 2000)
        try Self.void(order, [(2, Self.t0)], on: connection)
        let store = GoogleOrderStore(appId: "droid", prices: ConfiguredPrices())
        #expect(try store.settleVoided([order.orderId], on: connection) == [order.orderId])
        _ = try Self.store(order, on: connection)
        let priced = try Self.ledger(order.orderId, on: connection)
        #expect(priced.map(\.gross) == [500_000_000, 1_980_000_000])
        try Self.void(order, [(2, Self.t0)], on: connection)
        #expect(try store.settleVoided([order.orderId], on: connection).isEmpty)
        let again = try Self.ledger(order.orderId, on: connection)
        #expect(again.map(\.gross) == priced.map(\.gross))
        #expect(again.map(\.revoked) == [false, true])
    }

    /// An order Google refunded in part without revoking (a goodwill refund) is read again with the known orders:
    /// its next refund lands beside the first; once Google refunds it whole it is read no more.
    @Test func anOrderRefundedInPartIsReadAgainUntilRefundedWhole() throws {
        let connection = try Self.database("ledger_known")
        defer { connection.close() }
        let store = GoogleOrderStore(appId: "droid")
        var order = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        order.state = "PARTIALLY_REFUNDED"
        order.partial("0.50", tax: "0.083", created: Self.t0)
        _ = try Self.store(order, on: connection)
        #expect(try Self.ledger(order.orderId, on: connection).map(\.gross) == [500_000_000])
        #expect(try store.knownOrders(limit: 10, on: connection) == [order.orderId])

        order.partial("1.00", tax: "0.17", created: Self.t0 + 86_400_000)
        _ = try Self.store(order, on: connection)
        #expect(try Self.ledger(order.orderId, on: connection).map(\.gross) == [500_000_000, 1_000_000_000])
        #expect(try store.knownOrders(limit: 10, on: connection) == [order.orderId])

        order.state = "REFUNDED"
        order.fullRefund("6.93", tax: "1.155", at: Self.t0 + 2 * 86_400_000)
        _ = try Self.store(order, on: connection)
        let rows = try Self.ledger(order.orderId, on: connection)
        #expect(rows.compactMap(\.gross).reduce(0, +) == 6_930_000_000, "\(rows)")
        #expect(try store.knownOrders(limit: 10, on: connection).isEmpty)
    }

    /// Two goodwill refunds made in the same millisecond are two rows (they used to share a key, and the statement
    /// failed with the whole batch of orders on every run); storing the answer again changes nothing.
    @Test func twoRefundsMadeInTheSameMillisecondAreTwoRows() throws {
        let connection = try Self.database("ledger_same_ms")
        defer { connection.close() }
        var order = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        order.state = "PARTIALLY_REFUNDED"
        order.partial("0.50", tax: "0.083", created: Self.t0)
        order.partial("1.00", tax: "0.17", created: Self.t0)
        for _ in 0..<2 {
            _ = try Self.store(order, on: connection)
            #expect(try Self.ledger(order.orderId, on: connection).map(\.gross) == [500_000_000, 1_000_000_000])
        }
    }

    /// An order of GBP 1.99 with partial refunds of 1.50 and 1.00, voided whole: more refunded than charged.
    static func overRefunded(on connection: PostgresConnection) throws -> OrderHistoryBuilder {
        var order = OrderHistoryBuilder(currency: "GBP", total: "1.99", tax: "0.33", quantity: 1)
        order.partial("1.50", tax: "0.25", created: Self.t0)
        order.partial("1.00", tax: "0.17", created: Self.t0 + 60_000)
        try Self.void(order, [(nil, Self.t0 + 60_000)], on: connection)
        return order
    }

    /// An order refunding more than it charged (1.50 + 1.00 of GBP 1.99) goes to the quarantine, and its refunds
    /// leave the totals (no amount).
    @Test func anOverRefundedOrderIsQuarantinedAndOutOfTheTotals() throws {
        let connection = try Self.database("ledger_over")
        defer { connection.close() }
        let order = try Self.overRefunded(on: connection)
        #expect(try Self.store(order, on: connection).overRefunded == 1)
        #expect(try Self.ledger(order.orderId, on: connection).allSatisfy { $0.gross == nil })
        let quarantined = try connection.query(
            "SELECT job, natural_key, reason FROM quarantine WHERE resolved_at IS NULL")
        #expect(quarantined.count == 1)
        #expect(try quarantined[0].decode("job") as String == "google_orders")
        #expect(try (quarantined[0].decode("reason") as String).contains("more than the order's total"))
    }

    /// `google_order` keeps each order's text as Google sent it, byte for byte, and `quarantine retry` prices the
    /// order again from it (no store call): the over-refunded order is still set aside.
    @Test func theOrderIsKeptAsSentAndPricedAgainFromIt() throws {
        let connection = try Self.database("ledger_kept")
        defer { connection.close() }
        let order = try Self.overRefunded(on: connection)
        // Spacing and a member storerecon does not read, before the order's own members.
        let sent = "{ \"zz\" : [1, 2],\n  " + String(decoding: try order.json(), as: UTF8.self).dropFirst()
        let store = GoogleOrderStore(appId: "droid")
        _ = try store.store(
            [try order.order()], payloads: [sent], runId: nil, logger: Logger(label: "test"), on: connection)
        let kept: String = try connection.query("SELECT payload::text AS p FROM google_order")[0].decode("p")
        #expect(kept == sent)
        #expect(try store.reprice(orderId: order.orderId, logger: Logger(label: "test"), on: connection) == false)
        #expect(try Self.ledger(order.orderId, on: connection).allSatisfy { $0.gross == nil })
    }

    /// Item 6: a configured price is used only in the sale's currency. A JPY sale with a price configured in USD
    /// only keeps no amount (note `no_configured_price`); with a JPY price of 1500 it is estimated at JPY 1500.
    @Test func anEstimateIsOnlyEverInTheSalesCurrency() throws {
        let connection = try Self.database("ledger_estimate")
        defer { connection.close() }
        var order = OrderHistoryBuilder(currency: "JPY", total: "1500", tax: "136", quantity: 1)
        order.state = "REFUNDED"  // but no refund event: the order does not say what
        try Self.void(order, [(nil, Self.t0)], on: connection)
        _ = try Self.store(order, prices: ConfiguredPrices(["coins": ["USD": 9990]]), on: connection)
        let unknown = try connection.query("SELECT gross_amount, currency, amount_note FROM refund")[0]
        #expect(try unknown.decodeIfPresent("gross_amount", as: Int64.self) == nil)
        #expect(try unknown.decode("amount_note") as String == "no_configured_price")
        _ = try Self.store(order, prices: ConfiguredPrices(["coins": ["USD": 9990, "JPY": 1_500_000]]), on: connection)
        let estimate = try connection.query("SELECT gross_amount, currency, amount_source FROM refund")[0]
        #expect(try estimate.decode("gross_amount") as Int64 == 1_500_000)
        #expect(try estimate.decode("currency") as String == "JPY")
        #expect(try estimate.decode("amount_source") as String == "configured")
    }

    /// A voided row of an order already known (its currency too) is estimated at the configured unit price; when
    /// the order then says what it refunded, the store's amount replaces the estimate and nothing of it stays: the
    /// row equals one priced by the store at once (a chaos run found the configured unit price left behind).
    @Test func theStoresAmountReplacesAnEstimateWhole() throws {
        let connection = try Self.database("ledger_estimate_replaced")
        defer { connection.close() }
        let prices = ConfiguredPrices(["coins": ["JPY": 1_500_000]])
        var order = OrderHistoryBuilder(currency: "JPY", total: "1500", tax: "136", quantity: 1)
        try Self.void(order, [(nil, Self.t0)], on: connection)
        // The row as the ledger's upsert writes an estimate (`RefundLedger`, a record marked estimated).
        try connection.execute(
            """
            UPDATE refund SET gross_amount = 1500000, amount_precision = 3, amount_source = 'configured',
                              price_milli = 1500000, currency = 'JPY'
            """)
        order.state = "REFUNDED"
        order.fullRefund("1500", tax: "136", at: Self.t0 + 1000)
        _ = try Self.store(order, prices: prices, on: connection)
        let priced = try connection.query(
            "SELECT gross_amount, amount_precision, amount_source, price_milli FROM refund")[0]
        // JPY 1500 in nanos, as the store's amounts are kept.
        #expect(try priced.decode("gross_amount") as Int64 == 1_500_000_000_000)
        #expect(try priced.decode("amount_precision") as Int == 9)
        #expect(try priced.decode("amount_source") as String == "store")
        #expect(try priced.decodeIfPresent("price_milli", as: Int64.self) == nil)
    }

    /// Issue 27 item 4: impossible voided rows go to the quarantine, with their reason.
    @Test(arguments: [
        (#","voidedQuantity":-1"#, "voidedQuantity: -1"), (#","voidedQuantity":0"#, "voidedQuantity: 0"),
        (#","purchaseTimeMillis":"1790000000001""#, "before purchaseTimeMillis"),
    ])
    func impossibleValuesAreQuarantined(_ extra: String, _ reason: String) throws {
        let json = #"{"purchaseToken":"t","orderId":"GPA.5","voidedTimeMillis":"1790000000000"\#(extra)}"#
        let page = try VoidedPurchasesListResponse(json: Data(#"{"voidedPurchases":[\#(json)]}"#.utf8))
        let intake = RefundRecord.intake(page, receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(intake.records.isEmpty)
        #expect(intake.quarantined.first?.reason.contains(reason) == true, "\(intake.quarantined)")
    }

    /// A void time more than the clock skew ahead of when the page came is impossible.
    @Test func aVoidInTheFutureIsQuarantined() throws {
        let json = #"{"purchaseToken":"t","orderId":"GPA.6","voidedTimeMillis":"1800003600000"}"#
        let page = try VoidedPurchasesListResponse(json: Data(#"{"voidedPurchases":[\#(json)]}"#.utf8))
        let intake = RefundRecord.intake(page, receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(intake.quarantined.first?.reason.contains("in the future") == true)
    }

    /// Issue 27 item 7: an order the Orders API refused for want of permission waits a day in the nightly backlog,
    /// but `backfill google-orders` (run after the permission was granted) asks it at once.
    @Test func aBackfillAsksOrdersRefusedForPermissionAtOnce() throws {
        let connection = try Self.database("ledger_refused")
        defer { connection.close() }
        let order = OrderHistoryBuilder(currency: "USD", total: "1.99", tax: "0", quantity: 1)
        try Self.void(order, [(nil, Self.t0)], on: connection)
        let store = GoogleOrderStore(appId: "droid")
        #expect(try store.backlog(limit: 10, on: connection) == [order.orderId])
        try store.mark([order.orderId], status: .noPermission, on: connection)
        #expect(try store.backlog(limit: 10, on: connection).isEmpty)
        #expect(try store.backlog(limit: 10, refusedToo: true, on: connection) == [order.orderId])
    }
}
