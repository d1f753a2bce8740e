import Foundation
import Postgres
import Testing

@testable import Ledger

/// A goodwill refund (without revocation) dropped when a voided row of its order arrives, and put back by the
/// order's next answer, keeps when it was first recorded: a refund of a month already closed stays in that month
/// under `report refunds --store-periods --basis recorded`.
extension GoogleOrderStoreTests {
    static func recordedAt(_ orderId: String, on connection: PostgresConnection) throws -> [String: Date] {
        var recorded: [String: Date] = [:]
        for row in try connection.query(
            "SELECT part_key, recorded_at FROM refund WHERE order_id = $1", [orderId])
        {
            recorded[try row.decode("part_key")] = try row.decode("recorded_at")
        }
        return recorded
    }

    /// Rows of refunds set aside and not yet put back or forgotten.
    static func setAside(on connection: PostgresConnection) throws -> Int64 {
        try connection.query("SELECT count(*) AS n FROM refund_set_aside")[0].decode("n")
    }

    /// When the tests' goodwill refunds were first recorded: long ago, before their month's report was loaded.
    static let firstRecorded = Date(timeIntervalSince1970: 1_790_000_000)

    /// Stores `order`'s answer (a goodwill refund) and dates its rows ``firstRecorded``.
    static func storeRecordedLongAgo(_ order: OrderHistoryBuilder, on connection: PostgresConnection) throws {
        _ = try store(order, on: connection)
        try connection.execute(
            "UPDATE refund SET recorded_at = $1 WHERE order_id = $2", [firstRecorded, order.orderId])
    }

    /// Without `refused`, the order is answered at once; with it, Google first refuses it (403, asked again later).
    @Test(arguments: [false, true])
    func aGoodwillRefundPutBackAfterAVoidKeepsItsFirstRecording(refused: Bool) throws {
        let connection = try Self.database("ledger_setaside")
        defer { connection.close() }
        let store = GoogleOrderStore(appId: "droid", prices: ConfiguredPrices())
        var order = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        order.state = "PARTIALLY_REFUNDED"
        order.partial("0.50", tax: "0.083", created: Self.t0 - 60_000)
        try Self.storeRecordedLongAgo(order, on: connection)
        let goodwill = try #require(try Self.recordedAt(order.orderId, on: connection).keys.first)

        // Two units refunded with revocation later: the voided row drops the goodwill refund until the answer.
        order.partial("1.98", tax: "0.33", created: Self.t0 + 2000)
        try Self.void(order, [(2, Self.t0)], on: connection)
        #expect(try store.settleVoided([order.orderId], on: connection) == [order.orderId])
        #expect(try Self.recordedAt(order.orderId, on: connection)[goodwill] == nil)
        if refused {
            try store.mark([order.orderId], status: .noPermission, on: connection)
            #expect(try Self.setAside(on: connection) == 1)
        }

        _ = try Self.store(order, on: connection)
        let recorded = try Self.recordedAt(order.orderId, on: connection)
        #expect(recorded.count == 2)
        #expect(recorded[goodwill] == Self.firstRecorded)
        #expect(try Self.ledger(order.orderId, on: connection).map(\.gross) == [500_000_000, 1_980_000_000])
        #expect(try Self.setAside(on: connection) == 0)
    }

    /// A refund without revocation that the voided row turns out to hold (the Orders API was read between the refund
    /// and its voided row) is not put back, and nothing of it is left set aside.
    @Test func aRefundTheVoidedRowHoldsIsNotPutBack() throws {
        let connection = try Self.database("ledger_setaside_claimed")
        defer { connection.close() }
        let store = GoogleOrderStore(appId: "droid", prices: ConfiguredPrices())
        let order = Self.refundedWhole()
        _ = try Self.store(order, on: connection)
        #expect(try Self.ledger(order.orderId, on: connection).map(\.revoked) == [false])
        try Self.void(order, [(nil, Self.t0)], on: connection)
        #expect(try store.settleVoided([order.orderId], on: connection) == [order.orderId])
        _ = try Self.store(order, on: connection)
        #expect(try Self.ledger(order.orderId, on: connection).map(\.revoked) == [true])
        #expect(try Self.setAside(on: connection) == 0)
    }

    /// An answer that refunds more than the order charged is set aside and asked again: it puts back nothing yet, so
    /// the goodwill refund it dropped keeps its first recording for the corrected answer.
    @Test func anOverRefundedAnswerKeepsTheSetAsideForTheCorrectedOne() throws {
        let connection = try Self.database("ledger_setaside_over")
        defer { connection.close() }
        let store = GoogleOrderStore(appId: "droid", prices: ConfiguredPrices())
        var goodwill = OrderHistoryBuilder(currency: "GBP", total: "1.99", tax: "0.33", quantity: 1)
        goodwill.state = "PARTIALLY_REFUNDED"
        goodwill.partial("1.50", tax: "0.25", created: Self.t0)
        try Self.storeRecordedLongAgo(goodwill, on: connection)

        // Voided whole; the answer shows 1.50 + 1.00 refunded of 1.99.
        var over = goodwill
        over.state = "REFUNDED"
        over.partial("1.00", tax: "0.17", created: Self.t0 + 60_000)
        try Self.void(over, [(nil, Self.t0 + 60_000)], on: connection)
        #expect(try store.settleVoided([over.orderId], on: connection) == [over.orderId])
        #expect(try Self.store(over, on: connection).overRefunded == 1)
        #expect(try Self.setAside(on: connection) == 1)

        // Google's corrected answer: the goodwill 1.50, then the rest refunded with the void.
        var corrected = goodwill
        corrected.state = "REFUNDED"
        corrected.fullRefund("1.99", tax: "0.33", at: Self.t0 + 60_000)
        #expect(try Self.store(corrected, on: connection).overRefunded == 0)
        let rows = try connection.query(
            "SELECT revoked, gross_amount, recorded_at FROM refund ORDER BY refunded_at, id")
        #expect(try rows.map { try $0.decode("gross_amount", as: Int64.self) } == [1_500_000_000, 490_000_000])
        #expect(try rows.map { try $0.decode("revoked", as: Bool.self) } == [false, true])
        #expect(try rows[0].decode("recorded_at", as: Date.self) == Self.firstRecorded)
    }
}
