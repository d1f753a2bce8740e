import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import Reconciler
import TestSupport
import Testing

@testable import Ledger

/// A voided page priced before it is stored (``GoogleOrderStore/priceAhead(_:answered:)``) leaves the ledger exactly
/// as the usual way does (the page stored, then the Orders API's answer): the same rows, amounts, notes and orders.
@Suite struct GoogleOrderAheadTests {
    static let t0 = GoogleOrderStoreTests.t0

    /// Orders of every shape the rule knows: a whole refund and quantity parts with the rest in full (written with
    /// the page), a goodwill refund beside a part, a refund still pending, and an order refunding more than it
    /// charged (the usual way).
    static func orders() -> [(order: OrderHistoryBuilder, rows: [(units: Int?, millis: Int64)])] {
        var whole = OrderHistoryBuilder(currency: "USD", total: "4.99", tax: "0.41", quantity: 1)
        whole.orderId = "GPA.0000-0000-0000-00001"
        whole.fullRefund("4.99", tax: "0.41", at: t0 + 1000)
        var parts = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        parts.orderId = "GPA.0000-0000-0000-00002"
        parts.partial("1.98", tax: "0.33", created: t0 + 2000)
        parts.fullRefund("6.93", tax: "1.155", at: t0 + 600_000)
        var goodwill = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        goodwill.orderId = "GPA.0000-0000-0000-00003"
        goodwill.partial("0.50", tax: "0.083", created: t0 - 60_000)
        goodwill.partial("1.98", tax: "0.33", created: t0 + 2000)
        var pending = OrderHistoryBuilder(currency: "EUR", total: "2.99", tax: "0.48", quantity: 3)
        pending.orderId = "GPA.0000-0000-0000-00004"
        pending.partial("0.99", tax: "0.16", created: t0 + 3000, state: "PENDING")
        var over = OrderHistoryBuilder(currency: "GBP", total: "1.99", tax: "0.33", quantity: 1)
        over.orderId = "GPA.0000-0000-0000-00005"
        over.partial("1.50", tax: "0.25", created: t0)
        over.partial("1.00", tax: "0.17", created: t0 + 60_000)
        return [
            (whole, [(nil, t0 + 1000)]), (parts, [(2, t0), (nil, t0 + 599_000)]), (goodwill, [(2, t0)]),
            (pending, [(1, t0 + 3000)]), (over, [(nil, t0 + 60_000)]),
        ]
    }

    /// One voided page holding every row of `orders`.
    static func page(_ orders: [(order: OrderHistoryBuilder, rows: [(units: Int?, millis: Int64)])]) throws
        -> [RefundRecord]
    {
        let json = orders.flatMap { order, rows in
            rows.map { row in
                #"{"purchaseToken":"token-\#(order.orderId)","orderId":"\#(order.orderId)","voidedTimeMillis":"\#(row.millis)""#
                    + (row.units.map { #","voidedQuantity":\#($0)}"# } ?? "}")
            }
        }
        let page = try VoidedPurchasesListResponse(
            json: Data(#"{"voidedPurchases":[\#(json.joined(separator: ","))]}"#.utf8))
        return RefundRecord.intake(page, receivedAt: Date(timeIntervalSince1970: 1_800_000_000)).records
    }

    static func answered(_ orders: [OrderHistoryBuilder]) throws -> GoogleOrderStore.Answered {
        GoogleOrderStore.Answered(
            try orders.map { try $0.order() },
            payloads: try orders.map { String(decoding: try $0.json(), as: UTF8.self) })
    }

    /// What the ledger holds of an app: its refund rows and its orders, as comparable text.
    static func held(_ app: String, on connection: PostgresConnection) throws -> [String] {
        let refunds = try connection.query(
            """
            SELECT concat_ws('|', order_id, part_key, refund_type, revoked, quantity, gross_amount, tax_amount,
                             amount_precision, amount_source, amount_note, currency, buyer_country, product_id,
                             refund_reason, price_milli) AS r
            FROM refund WHERE app_id = $1 ORDER BY order_id, part_key
            """, [app]
        ).map { try $0.decode("r") as String }
        let orders = try connection.query(
            """
            SELECT concat_ws('|', order_id, status, state, currency, total_nanos, refund_pending, payload::text) AS o
            FROM google_order WHERE app_id = $1 ORDER BY order_id
            """, [app]
        ).map { try $0.decode("o") as String }
        let quarantined = try connection.query(
            "SELECT natural_key FROM quarantine WHERE app_id = $1 AND resolved_at IS NULL ORDER BY 1", [app]
        ).map { try $0.decode("natural_key") as String }
        return refunds + orders + quarantined
    }

    @Test func aPagePricedAheadLeavesTheLedgerAsTheUsualWayDoes() throws {
        let connection = try GoogleOrderStoreTests.database("ledger_ahead")
        defer { connection.close() }
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('ahead', 'google', 'com.ahead')")
        let orders = Self.orders()
        let records = try Self.page(orders)
        let answered = try Self.answered(orders.map(\.order))
        let logger = Logger(label: "test")
        // The usual way: the page, then the answer.
        let usual = GoogleOrderStore(appId: "droid")
        _ = try connection.transaction { try RefundLedger(appId: "droid").upsert(records, runId: nil, on: $0) }
        _ = try usual.store(answered, runId: nil, logger: logger, on: connection)
        // Ahead: the page with its amounts and orders, then the rest of the answer.
        let ahead = GoogleOrderStore(appId: "ahead")
        let priced = GoogleOrderStore.priceAhead(records, answered: answered)
        #expect(Set(priced.plain.orders.map(\.orderId)) == Set(orders.prefix(2).map(\.order.orderId)))
        #expect(Set(priced.rest.orders.map(\.orderId)) == Set(orders.suffix(3).map(\.order.orderId)))
        try connection.transaction { connection in
            _ = try RefundLedger(appId: "ahead").upsert(priced.records, runId: nil, on: connection)
            try ahead.saveAhead(priced, on: connection)
        }
        _ = try ahead.store(priced.rest, runId: nil, logger: logger, on: connection)
        let held = try Self.held("ahead", on: connection)
        #expect(held == (try Self.held("droid", on: connection)))
        #expect(held.count >= 12, "\(held)")
        // Known now, both ways: asked the usual way from here on.
        #expect(try ahead.known(orders.map(\.order.orderId) + ["GPA.unknown"], on: connection).count == orders.count)
        // The whole refund and the quantity parts are written once, with their amounts.
        #expect(priced.records.filter { if case .stated = $0.amount { true } else { false } }.count == 3)
        #expect(priced.pricedRows == 3)
    }

    /// A row another job wrote first with a configured estimate (an RTDN voided notification, between the page's
    /// look-up of known orders and its storing): the page priced ahead replaces the estimate with the store's
    /// amount, as the usual way's answer does (it used to keep the estimate, and the order was never asked again).
    @Test func aPricedAheadRowReplacesAnEstimateWrittenMeanwhile() throws {
        let connection = try GoogleOrderStoreTests.database("ledger_ahead_race")
        defer { connection.close() }
        let orders = Self.orders()
        let records = try Self.page(orders)
        let whole = orders[0].order.orderId
        let ledger = RefundLedger(appId: "droid")
        _ = try connection.transaction { try ledger.upsert(records.filter { $0.orderId == whole }, runId: nil, on: $0) }
        try connection.execute(
            """
            UPDATE refund SET gross_amount = 5490, amount_precision = 3, amount_source = 'configured', currency = 'USD'
            WHERE order_id = $1
            """, [whole])
        let priced = GoogleOrderStore.priceAhead(records, answered: try Self.answered(orders.map(\.order)))
        _ = try connection.transaction { try ledger.upsert(priced.records, runId: nil, on: $0) }
        let row = try connection.query(
            "SELECT gross_amount, amount_precision, amount_source FROM refund WHERE order_id = $1", [whole])[0]
        #expect(try row.decode("gross_amount", as: Int64.self) == 4_990_000_000)
        #expect(try row.decode("amount_precision", as: Int.self) == 9)
        #expect(try row.decode("amount_source", as: String.self) == "store")
    }

    /// An order another waiting page holds too goes back to the usual way: its rows as they came, its order with
    /// the rest.
    @Test func anOrderOnAnotherWaitingPageIsDemoted() throws {
        let orders = Self.orders()
        let records = try Self.page(orders)
        var priced = GoogleOrderStore.priceAhead(records, answered: try Self.answered(orders.map(\.order)))
        let whole = orders[0].order.orderId
        #expect(priced.records != records)
        #expect(priced.pricedRows == 3)
        priced.demote([whole, "GPA.elsewhere"])
        #expect(priced.pricedRows == 2)
        #expect(!priced.plain.orders.contains { $0.orderId == whole })
        #expect(priced.rest.orders.contains { $0.orderId == whole })
        #expect(priced.orderIds.count == orders.count)
        for (index, record) in records.enumerated() where record.orderId == whole {
            #expect(priced.records[index] == record)
        }
        #expect(priced.records.filter { $0.orderId != whole } != records.filter { $0.orderId != whole })
    }
}
