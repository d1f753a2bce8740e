import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// A group's facts and its customers' earlier refunds come in one round trip: a request's own facts win over its
/// customer's, and only the customer's other, unreversed refunds count.
@Suite("Facts and prior refunds")
struct FactsAndPriorRefundsTests {
    let facts = ConsumptionFacts(
        customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 25_000,
        sampleContentProvided: false, asOf: Date(timeIntervalSince1970: 1_790_000_000))

    /// Four refunds (t1, t3 of customer c1 and t2 reversed; t4 of c2) and facts kept under c1.
    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "factsprior"))
        try Migrator(connection: connection).migrate()
        try connection.execute(
            "INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.ios')")
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, original_id, refunded_at, refund_type, percentage_milli,
                                reversed_at, payload)
            VALUES ('ios', 'apple', 't1', 'c1', '2026-07-01T05:00:00Z', 'full', NULL, NULL, '{}'),
                   ('ios', 'apple', 't2', 'c1', '2026-07-01T05:00:00Z', 'full', NULL, '2026-07-01T06:00:00Z', '{}'),
                   ('ios', 'apple', 't3', 'c1', '2026-07-01T05:00:00Z', 'full', NULL, NULL, '{}'),
                   ('ios', 'apple', 't4', 'c2', '2026-07-01T05:00:00Z', 'full', NULL, NULL, '{}')
            """)
        _ = try ConsumptionFactStore.upsert(
            [ConsumptionFactRow(platform: .apple, purchaseId: "c1", facts: facts)], on: connection)
        return connection
    }

    /// A one-time purchase is its own original transaction: its customer's other purchases are those the refund sync
    /// grouped with it (c1 the head; o7, o8, o9 its members).
    @Test func anAppleCustomerIsTheRefundSyncsGroupOfOriginalTransactions() throws {
        let connection = try database()
        defer { connection.close() }
        try connection.execute(
            """
            INSERT INTO apple_refund_cursor (app_id, original_transaction_id, customer, app_transaction_id)
            VALUES ('ios', 'c1', NULL, NULL), ('ios', 'o7', 'c1', NULL), ('ios', 'o8', 'c1', 'atx-1'),
                   ('ios', 'o9', 'c1', NULL), ('ios', 'c2', NULL, NULL)
            """)
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, original_id, purchased_at, refunded_at, refund_type,
                                payload)
            VALUES ('ios', 'apple', 'o8', 'o8', '2025-03-01T00:00:00Z', '2026-07-02T05:00:00Z', 'full', '{}'),
                   ('ios', 'apple', 'o9', 'o9', '2024-01-01T00:00:00Z', '2026-07-02T05:00:00Z', 'family_revoke',
                    '{}'),
                   ('ios', 'apple', 't6', 'c2', '2025-06-01T00:00:00Z', '2026-07-02T05:00:00Z', 'full', '{}')
            """)
        func request(_ id: String, of original: String? = nil, customer: String? = nil) -> NewRefundRequest {
            NewRefundRequest(
                store: .apple, requestId: "u-\(id)", transactionId: id, originalId: original ?? id, productId: nil,
                productType: "Consumable", country: nil, familyShared: false, reason: nil, pendingToken: nil,
                receivedAt: Date(timeIntervalSince1970: 1_795_000_000), purchasedAt: nil, firstPurchasedAt: nil,
                expiresAt: nil, appTransactionId: customer)
        }
        let found = try ConsumptionFactStore.factsAndPriorRefunds(
            for: [request("o7"), request("c1"), request("o8"), request("x1"), request("t5", of: "c2")],
            platform: .apple, appId: "ios", on: connection)
        // o7: c1's t1 and t3 and o8's refund (t2 reversed, o9 a family revocation); c1, the head, the same; o8: t1
        // and t3; x1: nobody's; t5, a renewal of c2: t4 and t6. The first purchase dated: o8's (o9 was shared).
        #expect(found.map(\.priorRefunds) == [3, 3, 2, 0, 2])
        let day = { (text: String) in ISO8601DateFormatter().date(from: text) }
        #expect(
            found.map(\.firstPurchasedAt) == [
                day("2025-03-01T00:00:00Z"), day("2025-03-01T00:00:00Z"), day("2025-03-01T00:00:00Z"), nil,
                day("2025-06-01T00:00:00Z"),
            ])
        // A consumable new to the refund sync (no cursor row of its own) finds its customer by appTransactionId,
        // stored with the request and read back with it.
        let store = RefundRequestStore(appId: "ios")
        try store.insert(
            [request("n1", customer: "atx-1"), request("n2", customer: "atx-9")], runId: nil, on: connection)
        let open = try store.open(limit: 10, now: Date(timeIntervalSince1970: 1_795_000_000), on: connection)
        #expect(open.map(\.request.appTransactionId) == ["atx-1", "atx-9"])
        let new = try ConsumptionFactStore.factsAndPriorRefunds(
            for: open.map(\.request), platform: .apple, appId: "ios", on: connection)
        #expect(new.map(\.priorRefunds) == [3, 0])
        // Google has no such groups: a purchase token is its own customer.
        let google = try ConsumptionFactStore.factsAndPriorRefunds(
            for: [request("o7")], platform: .google, appId: "ios", on: connection)
        #expect(google.map(\.priorRefunds) == [0])
    }

    @Test func aGroupInOneQueryGivesEachRequestItsOwnFactsAndPriorRefunds() throws {
        let connection = try database()
        defer { connection.close() }
        var own = facts
        own.consumptionMilli = 0
        _ = try ConsumptionFactStore.upsert(
            [ConsumptionFactRow(platform: .apple, purchaseId: "t8", facts: own)], on: connection)
        func request(_ transactionId: String, _ originalId: String?) -> NewRefundRequest {
            NewRefundRequest(
                store: .apple, requestId: "u-\(transactionId)", transactionId: transactionId, originalId: originalId,
                productId: nil, productType: nil, country: nil, familyShared: false, reason: nil, pendingToken: nil,
                receivedAt: Date(timeIntervalSince1970: 1_795_000_000), purchasedAt: nil, firstPurchasedAt: nil,
                expiresAt: nil)
        }
        let found = try ConsumptionFactStore.factsAndPriorRefunds(
            for: [
                request("t1", "c1"), request("t9", nil), request("t0", "c1"), request("t8", "c1"), request("t5", "c2"),
                request("c1", nil),
            ],
            platform: .apple, appId: "ios", on: connection)
        // t1: c1's facts, t3 counts (t2 reversed); t9: nothing known; t0: t1 and t3 count; t8: its own facts win
        // over c1's; t5: c2 has t4 and no facts; a request without its customer's id counts no refunds.
        #expect(found.map(\.facts) == [facts, nil, facts, own, nil, facts])
        #expect(found.map(\.priorRefunds) == [1, 0, 2, 2, 1, 0])
        // The facts alone, by any of a purchase's ids: the first id given that has facts wins.
        #expect(try ConsumptionFactStore.facts(platform: .apple, ids: ["t9", "c1"], on: connection) == facts)
        #expect(try ConsumptionFactStore.facts(platform: .apple, ids: ["t8", "c1"], on: connection) == own)
        #expect(try ConsumptionFactStore.facts(platform: .apple, ids: ["t9"], on: connection) == nil)
        #expect(try ConsumptionFactStore.facts(platform: .google, ids: ["c1"], on: connection) == nil)
        #expect(
            try ConsumptionFactStore.factsAndPriorRefunds(for: [], platform: .apple, appId: "ios", on: connection)
                .isEmpty)
    }
}
