import Foundation
import Logging
import Postgres
import Reconciler
import TestSupport
import Testing

@testable import Ledger

/// A voided row and the Orders API's answer about the same order, written at once by two processes (the hourly
/// voided sync and the nightly orders job, or a refund-requests run's notification): the money is counted once.
extension GoogleOrderStoreTests {
    /// A fresh database with the app, and its connection string for a second session.
    static func sessions(_ prefix: String) throws -> (String, PostgresConnection) {
        let conninfo = try TestDatabase.create(prefix: prefix)
        let connection = try PostgresConnection(conninfo: conninfo)
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        return (conninfo, connection)
    }

    /// An order refunded whole with revocation at ``t0``.
    static func refundedWhole() -> OrderHistoryBuilder {
        var order = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        order.state = "REFUNDED"
        order.fullRefund("6.93", tax: "1.155", at: Self.t0)
        return order
    }

    /// The order's refund in the ledger once: revoked, at the store's amount.
    static func expectCountedOnce(_ order: OrderHistoryBuilder, on connection: PostgresConnection) throws {
        let ledger = try Self.ledger(order.orderId, on: connection)
        #expect(ledger.map(\.revoked) == [true])
        #expect(ledger.map(\.gross) == [6_930_000_000])
    }

    /// The voided row's transaction began before the answer's and stores its row after the answer committed: the
    /// row is dated when it was written, so the order is asked again and the answer's copy of the refund goes.
    @Test func aVoidedRowWrittenAfterAnAnswerThatBeganLaterIsAskedAgain() throws {
        let (conninfo, connection) = try Self.sessions("ledger_race_dated")
        defer { connection.close() }
        let other = try PostgresConnection(conninfo: conninfo)
        defer { other.close() }
        let order = Self.refundedWhole()
        let records = try Self.voided(order, [(nil, Self.t0)])

        try connection.execute("BEGIN")
        _ = try connection.query("SELECT now()")
        _ = try Self.store(order, on: other)
        #expect(try Self.ledger(order.orderId, on: other).map(\.revoked) == [false])
        _ = try RefundLedger(appId: "droid", prices: ConfiguredPrices()).upsert(records, runId: nil, on: connection)
        try connection.execute("COMMIT")

        let store = GoogleOrderStore(appId: "droid", prices: ConfiguredPrices())
        #expect(try store.settleVoided([order.orderId], on: connection) == [order.orderId])
        _ = try Self.store(order, on: connection)
        try Self.expectCountedOnce(order, on: connection)
    }

    /// The answer comes while the voided row's transaction is open: it waits for it (asked of the server, not
    /// timed), then sees the row and prices it instead of recording the refund a second time without revocation.
    @Test func anAnswerWrittenWhileAVoidedRowIsUncommittedWaitsAndPricesIt() throws {
        let (conninfo, connection) = try Self.sessions("ledger_race_wait")
        defer { connection.close() }
        let answerer = SubscriptionRevocationRaceTests.Session(try PostgresConnection(conninfo: conninfo))
        defer { answerer.connection.close() }
        let order = Self.refundedWhole()

        try connection.execute("BEGIN")
        _ = try RefundLedger(appId: "droid", prices: ConfiguredPrices()).upsert(
            try Self.voided(order, [(nil, Self.t0)]), runId: nil, on: connection)
        let (answer, payload) = (try order.order(), String(decoding: try order.json(), as: UTF8.self))
        let failure = try SubscriptionRevocationRaceTests.blocked(
            answerer, conninfo: conninfo,
            {
                _ = try GoogleOrderStore(appId: "droid", prices: ConfiguredPrices()).store(
                    [answer], payloads: [payload], runId: nil, logger: Logger(label: "test"), on: $0)
            }
        ) { try connection.execute("COMMIT") }
        #expect(failure == nil)

        let store = GoogleOrderStore(appId: "droid", prices: ConfiguredPrices())
        let asked = try store.settleVoided([order.orderId], on: connection)
        if !asked.isEmpty { _ = try Self.store(order, on: connection) }
        try Self.expectCountedOnce(order, on: connection)
    }

    /// The voided sync prices an order ahead (the ledger did not know it), and before its page is stored the nightly
    /// orders job stores the order's answer: its refund without revocation. The page, under the app's lock, sees the
    /// order known now and writes its row without the amount; the answer stored after it claims the refund.
    @Test func anOrderPricedAheadThatAnotherProcessStoredMeanwhileIsStoredTheUsualWay() throws {
        let (conninfo, connection) = try Self.sessions("ledger_race_ahead")
        defer { connection.close() }
        let other = try PostgresConnection(conninfo: conninfo)
        defer { other.close() }
        let order = Self.refundedWhole()
        let answered = GoogleOrderStore.Answered(
            [try order.order()], payloads: [String(decoding: try order.json(), as: UTF8.self)])
        var priced = GoogleOrderStore.priceAhead(try Self.voided(order, [(nil, Self.t0)]), answered: answered)
        #expect(priced.plain.orders.map(\.orderId) == [order.orderId])

        _ = try Self.store(order, on: other)
        let store = GoogleOrderStore(appId: "droid", prices: ConfiguredPrices())
        let moved = try connection.transaction { connection in
            let moved = try store.confirmAhead(&priced, on: connection)
            _ = try RefundLedger(appId: "droid", prices: ConfiguredPrices()).upsert(
                priced.records, runId: nil, on: connection)
            try store.saveAhead(priced, on: connection)
            return moved
        }
        #expect(moved && priced.plain.orders.isEmpty && priced.rest.orders.count == 1)
        _ = try store.store(priced.rest, runId: nil, logger: Logger(label: "test"), on: connection)
        try Self.expectCountedOnce(order, on: connection)
    }
}
