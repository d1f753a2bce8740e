import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// How a page reaches the ledger: after a page of only new rows the next is written with a plain INSERT, and a row
/// already stored sends that page back through the upsert; either way voids link to their subscription by purchase
/// token and a voided current order ends the entitlement.
@Suite("Google voided sync: ledger writes, subscription links and revocations")
struct GoogleVoidedLedgerTests {
    static let spec = ScenarioSpec(
        seed: 23, subscriptions: 12000, oneTimePurchases: 9000, refunds: 9000, historyDays: 30, futureDays: 0)

    @Test func aStoredRowInTheMiddleOfTheBacklogIsNeitherDuplicatedNorAnError() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvledger"))
            let now = harness.stores.now()
            let ordered = harness.orderedTruth(
                recordedFrom: VoidedWindowPlanner.oldestStart(now: now), to: now.addingTimeInterval(-60))
            try #require(ordered.count > 3 * 1000, "the backlog should take more than three pages")
            #expect(try await harness.googleVoided().exitCode == 0)
            // Keep only rows of the second and fourth pages and forget the checkpoint: the first page then lands as
            // all new, so the second is tried as a plain INSERT and meets a stored row; likewise the fourth.
            let kept = [ordered[1500], ordered[3001]]
            let connection = try harness.connection()
            try connection.execute(
                "DELETE FROM refund WHERE NOT (order_id = ANY($1::text[]) AND part_key = ANY($2::text[]))",
                [PostgresTextArray(kept.map(\.orderId)), PostgresTextArray(kept.map(\.partKey))])
            try #require(try connection.query("SELECT count(*) AS n FROM refund")[0].decode("n", as: Int.self) == 2)
            try connection.execute("DELETE FROM sync_checkpoint")

            let again = try await harness.googleVoided()
            #expect(again.exitCode == 0, "\(again.error ?? "")")
            #expect(again.counts["inserted"] == ordered.count - 2)
            #expect(again.counts["updated"] ?? 0 == 0)
            #expect(try harness.storedVoids() == Set(ordered))
        }
    }

    @Test func voidsLinkToTheirSubscriptionAndAVoidedCurrentOrderRevokesIt() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvlink"))
            let app = harness.stores.app(.google).id
            let now = harness.stores.now()
            let ordered = harness.orderedTruth(
                recordedFrom: VoidedWindowPlanner.oldestStart(now: now), to: now.addingTimeInterval(-60))
            let tokens = Dictionary(grouping: ordered, by: \.purchaseToken)
            // One subscription per token on several pages (the first is written by the upsert, later ones by the
            // plain INSERT): even ones have the voided order as their current order, odd ones another order.
            let picks = [10, 1200, 2500, 3900].compactMap { index in
                index < ordered.count ? ordered[index].purchaseToken : nil
            }
            try #require(picks.count == 4 && Set(picks).count == 4)
            let product = try #require(harness.stores.configuration.products.keys.sorted().first)
            let connection = try harness.connection()
            for (index, token) in picks.enumerated() {
                let order = index % 2 == 0 ? tokens[token]![0].orderId : "GPA.not-voided"
                try connection.execute(
                    """
                    INSERT INTO subscription (app_id, store_id, product_id, state, entitled, current_order_id)
                    VALUES ($1, $2, $3, 'active', true, $4)
                    """, [app, token, product, order])
            }

            #expect(try await harness.googleVoided().exitCode == 0)
            #expect(try harness.storedVoids() == Set(ordered))
            for (index, token) in picks.enumerated() {
                try Self.expectLinked(
                    connection, token: token, index: index, product: product, voids: tokens[token]!.count,
                    currentOrderVoided: index % 2 == 0)
            }
        }
    }

    /// Every void of `token` is linked to the subscription holding it; that subscription is revoked (once, by the
    /// voided sync) when its current order was voided, and otherwise stays entitled and is flagged.
    static func expectLinked(
        _ connection: PostgresConnection, token: String, index: Int, product: String, voids: Int,
        currentOrderVoided: Bool
    ) throws {
        let subscription = try connection.query(
            """
            SELECT id, state, entitled, flagged_at IS NOT NULL AS flagged FROM subscription
            WHERE store_id = $1
            """, [token])[0]
        let id: Int64 = try subscription.decode("id")
        let links = try connection.query(
            """
            SELECT count(*) FILTER (WHERE subscription_id = $2 AND product_id = $3) AS linked, count(*) AS n
            FROM refund WHERE original_id = $1
            """, [token, id, product])[0]
        #expect(try links.decode("n", as: Int.self) == voids)
        #expect(try links.decode("linked", as: Int.self) == voids, "token \(index)")
        let transitions = try connection.query(
            """
            SELECT count(*) AS n FROM subscription_transition
            WHERE subscription_id = $1 AND new_state = 'revoked' AND source = 'google_voided'
            """, [id])[0]
        if currentOrderVoided {
            #expect(try subscription.decode("state", as: String.self) == "revoked")
            #expect(try subscription.decode("entitled", as: Bool.self) == false)
            #expect(try transitions.decode("n", as: Int.self) == 1)
        } else {
            #expect(try subscription.decode("state", as: String.self) == "active")
            #expect(try subscription.decode("entitled", as: Bool.self) == true)
            #expect(try subscription.decode("flagged", as: Bool.self) == true)
            #expect(try transitions.decode("n", as: Int.self) == 0)
        }
    }
}
