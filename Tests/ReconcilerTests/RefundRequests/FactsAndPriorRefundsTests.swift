import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// A request's facts and the customer's earlier refunds come in one round trip, with the same answers as the two
/// queries they replace: the first id with facts wins, and only the customer's other, unreversed refunds count.
@Suite("Facts and prior refunds")
struct FactsAndPriorRefundsTests {
    @Test func oneQueryGivesTheFactsAndTheCustomersOtherUnreversedRefunds() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "factsprior"))
        defer { connection.close() }
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
        let facts = ConsumptionFacts(
            customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 25_000,
            sampleContentProvided: false, asOf: Date(timeIntervalSince1970: 1_790_000_000))
        _ = try ConsumptionFactStore.upsert(
            [ConsumptionFactRow(platform: .apple, purchaseId: "c1", facts: facts)], on: connection)
        func ask(_ ids: [String], _ customer: ConsumptionFactStore.RefundCustomer?) throws -> (ConsumptionFacts?, Int) {
            let found = try ConsumptionFactStore.factsAndPriorRefunds(
                platform: .apple, ids: ids, customer: customer, on: connection)
            return (found.facts, found.priorRefunds)
        }
        let customer = ConsumptionFactStore.RefundCustomer(appId: "ios", originalId: "c1", transactionId: "t1")
        // t1 is the one asked about, t2 was reversed, t4 is another customer's: t3 alone counts.
        let both = try ask(["t9", "c1"], customer)
        #expect(both.0 == facts)
        #expect(both.1 == 1)
        let noFacts = try ask(["t9"], customer)
        #expect(noFacts.0 == nil)
        #expect(noFacts.1 == 1)
        #expect(try ask(["c1"], nil).1 == 0)
        var unknown = customer
        unknown.originalId = nil
        #expect(try ask(["c1"], unknown).1 == 0)
        #expect(try ask(["c1"], unknown).0 == facts)
        #expect(
            try ask(["c1"], ConsumptionFactStore.RefundCustomer(appId: "ios", originalId: "c1", transactionId: "t0")).1
                == 2)
    }
}
