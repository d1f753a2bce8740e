import Foundation
import Postgres
import Reports
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

/// Google's reviews from the answer to the money, storerecon against the simulator and a real database: the reviews
/// answered `APPROVE` end refunded (Google voids the order when the review ends: the voided-purchase RTDN records
/// it, the voided sync prices it from the order) and the report counts the order's price refunded; those answered
/// `DECLINE` end declined, their price kept.
@Suite("Google refund review outcomes, storerecon against the simulator")
struct GoogleReviewOutcomesTests {
    /// Facts by place: undelivered (the rules grant: `APPROVE`), or delivered and 80 % consumed (`DECLINE`).
    static func facts(_ pulled: [GoogleReviewOrdersTests.Row], at anchor: Date) -> [ConsumptionFactRow] {
        pulled.enumerated().map { index, row in
            let approve = index % 2 == 0
            return ConsumptionFactRow(
                platform: .google, purchaseId: row.orderId,
                facts: ConsumptionFacts(
                    customerConsented: true, deliveryStatus: approve ? .undeliveredQualityIssue : .delivered,
                    consumptionMilli: approve ? 0 : 80_000, sampleContentProvided: false, asOf: anchor))
        }
    }

    @Test func approvedReviewsEndRefundedWithTheLedgersMoneyDeclinedOnesDeclined() async throws {
        var spec = ScenarioSpec(
            seed: 43, subscriptions: 80, oneTimePurchases: 60, refunds: 0, historyDays: 60, futureDays: 4)
        spec.refundReviews = 6
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "reviewoutcomes")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            var app = stores.app(.google)
            app.rtdnSubscription = simulator.rtdnSubscription(app: app.id)
            app.pubsubBaseURL = simulator.baseURL.absoluteString
            app.refundRequests = RefundRequestRules(rules: [
                RefundRequestRule(when: RuleCondition(delivered: false), prefer: .grant),
                RefundRequestRule(when: RuleCondition(consumedPercentAtLeast: 50), prefer: .decline),
            ])
            let anchor = Date(timeIntervalSince1970: Double(spec.anchorMillis) / 1000)

            // The reviews are pulled, then answered once the backend's facts are in.
            _ = try await GoogleReviewOrdersTests.run(stores, app, at: anchor)
            let pulled = try GoogleReviewOrdersTests.rows(connection)
            try #require(pulled.count == 6)
            _ = try ConsumptionFactStore.upsert(Self.facts(pulled, at: anchor), on: connection)
            _ = try await GoogleReviewOrdersTests.run(stores, app, at: anchor)
            let sent = Dictionary(uniqueKeysWithValues: simulator.refundReviewAnswers().map { ($0.orderId, $0.body) })
            for (index, row) in pulled.enumerated() {
                let preference = index % 2 == 0 ? "APPROVE" : "DECLINE"
                #expect(sent[row.orderId]?.contains(#""refundPreference":"\#(preference)""#) == true)
            }

            // Three days on every review is over: Google voided the approved orders when their reviews ended.
            simulator.clock.advance(millis: 3 * 86_400_000)
            let later = stores.now()
            _ = try await GoogleReviewOrdersTests.run(stores, app, at: later)
            #expect(try await JobHarness(stores: stores).googleVoided().exitCode == 0)

            try Self.expectOutcomes(simulator, app.id, pulled: pulled, from: anchor, to: later, on: connection)
        }
    }

    /// Even places (answered `APPROVE`): Google's void at the review's end, `refunded`, the order's whole price
    /// refunded in the ledger; odd places (`DECLINE`): no void, `declined`, the price kept.
    static func expectOutcomes(
        _ simulator: StoreSimulator, _ appId: String, pulled: [GoogleReviewOrdersTests.Row], from anchor: Date,
        to later: Date, on connection: PostgresConnection
    ) throws {
        let voids = Dictionary(
            simulator.groundTruth().googleVoids.filter { $0.app == appId }.map { ($0.orderId, $0) }
        ) { first, _ in first }
        let money = try RefundRequestReport.money(
            from: anchor.addingTimeInterval(-86_400), to: later, on: connection)
        for (index, row) in try GoogleReviewOrdersTests.rows(connection).enumerated() {
            if index % 2 == 0 {
                // Refunded at the review's end, 24 h after the notification; the whole order, tax included.
                let void = try #require(voids[row.orderId], "\(row.orderId)")
                #expect(void.voidedReason == 7 && void.voidedSource == 2)
                #expect(row.decision == "refunded", "\(row.orderId)")
                let expected = void.unitPriceNanos * Int64(void.orderQuantity)
                #expect(money[row.id]?.kind == .refunded)
                #expect(money[row.id]?.currency == void.currency)
                #expect(money[row.id]?.nanos == Decimal(expected), "\(row.orderId)")
            } else {
                #expect(voids[row.orderId] == nil, "\(row.orderId)")
                #expect(row.decision == "declined", "\(row.orderId)")
                #expect(money[row.id]?.kind == .kept)
            }
        }
        // Each approved order is in the ledger once, with the order's money.
        let refunds = try connection.query(
            """
            SELECT count(*)::int AS n, count(gross_amount)::int AS priced FROM refund
            WHERE app_id = $1 AND order_id = ANY ($2::text[])
            """,
            [appId, PostgresTextArray(pulled.enumerated().filter { $0.offset % 2 == 0 }.map(\.element.orderId))]
        )[0]
        #expect(try refunds.decode("n", as: Int.self) == 3)
        #expect(try refunds.decode("priced", as: Int.self) == 3)
    }
}
