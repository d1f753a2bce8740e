import Foundation
import Postgres
import Reports
import TestSupport
import Testing

@testable import Reconciler

/// A customer who asks again about one purchase makes a second request: each store outcome and each refund is the
/// outcome of one request only, the latest received before it, so the report counts the refund and its money once.
@Suite("Refund requests: a purchase asked about twice")
struct RefundRequestAskedAgainTests {
    let received = Date(timeIntervalSince1970: 1_795_000_000)
    let hour: TimeInterval = 3600

    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "askedagain"))
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.x')")
        return connection
    }

    func request(_ uuid: String, transaction: String, at: Date) -> NewRefundRequest {
        NewRefundRequest(
            store: .apple, requestId: uuid, transactionId: transaction, originalId: "o-\(transaction)",
            productId: "coins", productType: "Consumable", country: "FR", familyShared: false, reason: nil,
            pendingToken: nil, receivedAt: at, purchasedAt: nil, firstPurchasedAt: nil, expiresAt: nil,
            priceNanos: 990_000_000, currency: "EUR")
    }

    func decisions(_ connection: PostgresConnection) throws -> [String: String] {
        var found: [String: String] = [:]
        for row in try connection.query("SELECT request_id, coalesce(decision, '-') AS d FROM refund_request") {
            found[try row.decode("request_id")] = try row.decode("d")
        }
        return found
    }

    /// Transaction 1 asked about at `received` (u1) and three hours later (u2).
    func askedTwice() throws -> (PostgresConnection, RefundRequestStore) {
        let connection = try database()
        let ios = RefundRequestStore(appId: "ios")
        try ios.insert(
            [request("u1", transaction: "1", at: received), request("u2", transaction: "1", at: received + 3 * hour)],
            runId: nil, on: connection)
        return (connection, ios)
    }

    @Test func aDeclineStaysTheFirstRequestsAndTheLaterRefundIsTheSecondsInOneBatch() throws {
        let (connection, ios) = try askedTwice()
        defer { connection.close() }
        let outcomes: [RefundRequestStore.Outcome] = [
            .init(transactionId: "1", decision: .declined, at: received + 2 * hour),
            .init(transactionId: "1", decision: .refunded, revocationType: "REFUND_FULL", at: received + 4 * hour),
        ]
        #expect(try ios.recordOutcomes(outcomes, on: connection) == 2)
        #expect(try decisions(connection) == ["u1": "declined", "u2": "refunded"])
        #expect(try ios.recordOutcomes(outcomes, on: connection) == 0)
    }

    @Test func aRefundTheLedgerFoundIsTheLatestRequestsAndItsMoneyIsCountedOnce() throws {
        let (connection, ios) = try askedTwice()
        defer { connection.close() }
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, gross_amount, amount_precision,
                                amount_source, currency, payload)
            VALUES ('ios', 'apple', '1', $1, 'full', 790, 3, 'store', 'EUR', '{}')
            """, [received + 4 * hour])
        #expect(try ios.appleOutcomesFromLedger(on: connection) == 1)
        #expect(try decisions(connection) == ["u1": "-", "u2": "refunded"])

        let money = try RefundRequestReport.money(from: received - hour, to: received + 5 * hour, on: connection)
        #expect(money.count == 1)
        let only = try #require(money.values.first)
        // The ledger's amount (7.90), not the 9.90 signed with the request.
        #expect(only.kind == .refunded && only.currency == "EUR" && only.nanos == 790_000_000)
    }

    /// A refund whose amount is a configured estimate is not summed as the store's: the price the store signed is;
    /// a prorated refund without its percentage is an unknown amount, never the full price.
    @Test func estimatesAndProratedRefundsWithoutAShareAreNotSummedAsTheStoresAmount() throws {
        let connection = try database()
        defer { connection.close() }
        let ios = RefundRequestStore(appId: "ios")
        try ios.insert(
            [request("u1", transaction: "1", at: received), request("u2", transaction: "2", at: received)], runId: nil,
            on: connection)
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, gross_amount, amount_precision,
                                amount_source, currency, payload)
            VALUES ('ios', 'apple', '1', $1, 'full', 500, 3, 'configured', 'EUR', '{}')
            """, [received + hour])
        let outcomes: [RefundRequestStore.Outcome] = [
            .init(transactionId: "1", decision: .refunded, revocationType: "REFUND_FULL", at: received + hour),
            .init(transactionId: "2", decision: .refunded, revocationType: "REFUND_PRORATED", at: received + hour),
        ]
        #expect(try ios.recordOutcomes(outcomes, on: connection) == 2)
        let money = try RefundRequestReport.money(from: received - hour, to: received + 5 * hour, on: connection)
        #expect(
            Set(money.values.map { "\($0.currency ?? "-") \($0.nanos.map { "\($0)" } ?? "unknown")" }) == [
                "EUR 990000000", "EUR unknown",
            ])
        // A refund the ledger holds without an amount yet (a prorated share Apple did not give) is unknown too, not
        // the price.
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, currency, payload)
            VALUES ('ios', 'apple', '2', $1, 'prorated', 'EUR', '{}')
            """, [received + hour])
        try connection.execute("UPDATE refund_request SET revocation_type = NULL WHERE request_id = 'u2'")
        let again = try RefundRequestReport.money(from: received - hour, to: received + 5 * hour, on: connection)
        #expect(again.values.filter { $0.nanos == nil }.count == 1)
    }
}
