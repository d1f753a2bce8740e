import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

extension GoogleReviewOrdersTests {
    /// Rules on the first review's product and on another review's country; usage evidence for the first review.
    static func answer(
        _ stores: SimulatedStores, _ app: inout AppConfig, pulled: [Row], at anchor: Date,
        on connection: PostgresConnection
    ) async throws {
        let product = try #require(pulled[0].product)
        let country = pulled.first { $0.product != product }?.country
        app.refundRequests = RefundRequestRules(rules: [
            RefundRequestRule(when: RuleCondition(products: [product]), prefer: .decline),
            RefundRequestRule(when: RuleCondition(countries: [country ?? "--"]), prefer: .grant),
        ])
        let facts = ConsumptionFacts(
            customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 30_000, sampleContentProvided: false,
            asOf: anchor)
        _ = try ConsumptionFactStore.upsert(
            pulled.map { ConsumptionFactRow(platform: .google, purchaseId: $0.orderId, facts: facts) }, on: connection)
        try connection.execute(
            """
            INSERT INTO consumption_usage_event (purchase_id, consumption_time, ip_address, region_code, locality,
                                                 item_description)
            VALUES ($1, '2026-11-17T10:00:00Z', '198.51.100.4', 'DE', 'Berlin', 'chapter 1'),
                   ($1, '2026-11-18T10:00:00Z', '203.0.113.7', 'DE', NULL, NULL)
            """, [pulled[0].orderId])

        // The orders were read in the first run: none is asked again.
        #expect(try await run(stores, app, at: anchor) == 0)
        let sent = Dictionary(
            uniqueKeysWithValues: stores.simulator.refundReviewAnswers().map { ($0.orderId, $0.body) })
        var byCountry = 0
        for row in try rows(connection) {
            let (rule, preference) =
                row.product == product
                ? ("rules[0]", "DECLINE") : row.country == country ? ("rules[1]", "APPROVE") : ("default", "NEUTRAL")
            #expect(row.rule == rule, "\(row.orderId)")
            #expect(sent[row.orderId]?.contains(#""refundPreference":"\#(preference)""#) == true, "\(row.orderId)")
            if rule == "rules[1]" { byCountry += 1 }
        }
        #expect(country == nil || byCountry > 0)

        // The evidence reached Google, most recent first, and is kept nowhere.
        let first = try #require(sent[pulled[0].orderId])
        #expect(
            first.contains(
                #""consumptionUsageEvents":[{"consumptionTime":"2026-11-18T10:00:00Z","ipAddress":"203.0.113.7","location":{"regionCode":"DE"}},{"consumptionItemDescription":"chapter 1","consumptionTime":"2026-11-17T10:00:00Z","ipAddress":"198.51.100.4","location":{"locality":"Berlin","regionCode":"DE"}}]"#
            ))
        #expect(try count(connection, "SELECT count(*)::int AS n FROM consumption_usage_event") == 0)
        let stored: String = try connection.query(
            "SELECT body_sent::text AS body FROM refund_request WHERE id = $1", [pulled[0].id])[0].decode("body")
        #expect(!stored.contains("ipAddress") && !stored.contains("203.0.113.7") && !stored.contains("Berlin"))
        #expect(stored.contains(#""consumptionUsageEventsSent": 2"#))
    }

    /// Three days on: every review is over but one received later; the ledger's void and Google's refund make
    /// `refunded`, the rest `declined`, with one Orders call, and none on the next run.
    static func decide(
        _ stores: SimulatedStores, _ app: AppConfig, pulled: [Row], anchor: Date, on connection: PostgresConnection
    ) async throws {
        let truth = stores.simulator.groundTruth()
        let anchorMillis = Int64(anchor.timeIntervalSince1970 * 1000)
        let void = try #require(
            truth.googleVoids.first {
                $0.app == app.id && $0.voidedQuantity == nil && $0.voidedTimeMillis <= anchorMillis
                    && !pulled.map(\.orderId).contains($0.orderId)
            })
        let voidedAt = Date(timeIntervalSince1970: Double(void.voidedTimeMillis) / 1000)
        let later = anchor.addingTimeInterval(3 * 86_400)
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, payload)
            SELECT app_id, 'google', transaction_id, received_at + interval '2 hours', 'full', '{}'
            FROM refund_request WHERE id = $1
            """, [pulled[1].id])
        try connection.execute(
            """
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, pending_token, received_at, deadline)
            VALUES ($1, 'google', 'voided', $2, 'prt-v', $3::timestamptz, $3::timestamptz + interval '24 hours'),
                   ($1, 'google', 'later', $4, 'prt-l', $5::timestamptz, $5::timestamptz + interval '24 hours')
            """,
            [
                app.id, void.orderId, voidedAt.addingTimeInterval(-3600), pulled[2].orderId,
                later.addingTimeInterval(-30 * 3600),
            ])

        #expect(try await run(stores, app, at: later) == 1)
        let refunded = Set(truth.googleVoids.map(\.orderId) + truth.googleRefundsWithoutRevocation.map(\.orderId))
        let decided = try rows(connection)
        for row in decided where pulled.contains(where: { $0.id == row.id }) {
            let expected = row.id == pulled[1].id || refunded.contains(row.orderId) ? "refunded" : "declined"
            #expect(row.decision == expected, "\(row.orderId)")
        }
        let voided = try #require(decided.first { $0.orderId == void.orderId })
        #expect(voided.decision == "refunded")
        // Read from the order: the product and country Google sold it for.
        #expect(voided.product == void.productId && voided.country == void.buyerCountry)
        #expect(decided.last?.decision == nil, "a review not over yet stays undecided")

        #expect(try await run(stores, app, at: later) == 0)
        #expect(try rows(connection).map(\.decision) == decided.map(\.decision))

        try await unknownOrder(stores, app, later: later, on: connection)
    }

    /// An ended review of an order Google does not know is asked about once, then again a day later, not on every
    /// run: its outcome stays unknown.
    static func unknownOrder(
        _ stores: SimulatedStores, _ app: AppConfig, later: Date, on connection: PostgresConnection
    ) async throws {
        try connection.execute(
            """
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, pending_token, received_at, deadline)
            VALUES ($1, 'google', 'unknown', 'GPA.0000-0000-0000-00000', 'prt-u', $2::timestamptz,
                    $2::timestamptz + interval '24 hours')
            """, [app.id, later.addingTimeInterval(-3 * 86_400)])
        #expect(try await run(stores, app, at: later) == 1)
        #expect(try await run(stores, app, at: later.addingTimeInterval(3600)) == 0)
        #expect(try await run(stores, app, at: later.addingTimeInterval(86_401)) >= 1)
        #expect(
            try count(
                connection,
                "SELECT count(*)::int AS n FROM refund_request WHERE request_id = 'unknown' AND decision IS NULL") == 1)
    }
}
