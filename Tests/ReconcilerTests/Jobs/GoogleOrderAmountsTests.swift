import Foundation
import Ledger
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// The Orders API amounts of Google refunds against the simulator: order not found, no permission, a pending
/// refund settled later, and the daily budget; nothing lost in any case.
@Suite("Google refund amounts from the Orders API", .serialized)
struct GoogleOrderAmountsTests {
    static let spec = ScenarioSpec(
        seed: 31, subscriptions: 2000, oneTimePurchases: 4000, refunds: 3000, historyDays: 30, futureDays: 2)

    static func options() -> SimulatorOptions {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        return options
    }

    /// Active subscriptions, each with its current order, as the recheck keeps them (latestSuccessfulOrderId).
    static func insertActiveSubscriptions(
        _ connection: PostgresConnection, appId: String, _ currentOrders: [(storeId: String, orderId: String)]
    ) throws {
        for (storeId, orderId) in currentOrders {
            try connection.execute(
                """
                INSERT INTO subscription (app_id, store_id, product_id, state, current_order_id)
                VALUES ($1, $2, 'p', 'active', $3) ON CONFLICT DO NOTHING
                """, [appId, storeId, orderId])
        }
    }

    /// Google refund rows by amount state.
    static func amounts(_ harness: JobHarness) throws -> (store: Int, other: Int, notes: [String: Int]) {
        let connection = try harness.connection()
        let row = try connection.query(
            """
            SELECT count(*) FILTER (WHERE amount_source = 'store') AS store,
                   count(*) FILTER (WHERE amount_source IS DISTINCT FROM 'store') AS other
            FROM refund WHERE platform = 'google' AND revoked
            """)[0]
        var notes: [String: Int] = [:]
        for note in try connection.query(
            "SELECT amount_note, count(*) AS n FROM refund WHERE platform = 'google' AND revoked AND amount_note IS NOT NULL GROUP BY 1"
        ) {
            notes[try note.decode("amount_note")] = try note.decode("n")
        }
        return (try row.decode("store"), try row.decode("other"), notes)
    }

    func orderCalls(_ simulator: StoreSimulator) -> Int {
        simulator.statistics().filter { $0.endpoint == .googleOrders }.map(\.granted).reduce(0, +)
    }

    /// Once an Orders call of the run has been answered, a page's orders the ledger does not know are asked as the
    /// page comes, and the page is written with their amounts: at store latency, every page after the first two.
    /// Every refund ends with the store's amount, and each call is counted once.
    @Test func pagesAfterTheFirstAnsweredCallAreWrittenWithTheirAmounts() async throws {
        // Six pages of one slice. The first Orders call leaves once the first page is stored and asks for 1000
        // orders, which a debug build of the simulator takes 1 to 3 s to answer on a busy 2-core host: at a second a
        // page, its answer still comes before the fourth or fifth page (the sixth, the slice's last, is never priced
        // ahead), where at 200 ms a page it came after the fifth (so nothing was priced ahead).
        var options = JobHarness.options(
            ScenarioSpec(
                seed: 31, subscriptions: 8000, oneTimePurchases: 8000, refunds: 15_000, historyDays: 30, futureDays: 2))
        JobHarness.unlimited(&options)
        options.latency = Latency(millis: 1000)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "goahead"))
            let result = try await harness.googleVoided()
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let amounts = try Self.amounts(harness)
            #expect(amounts.store > 1000 && amounts.other == 0, "\(amounts)")
            let orders: Int = try harness.connection().query(
                "SELECT count(DISTINCT order_id) AS n FROM refund WHERE platform = 'google'")[0].decode("n")
            let ahead = result.counts["orders_asked_ahead"] ?? 0
            #expect(ahead > 0 && ahead < orders, "\(ahead) of \(orders) orders asked ahead; \(result.counts)")
            #expect(result.counts["orders_calls"] == orderCalls(simulator), "\(result.counts)")
            print("orders asked ahead: \(ahead) of \(orders), in \(result.counts["orders_calls"] ?? 0) calls")
        }
    }

    @Test func anUnknownOrderIsSetAsideByHalvingAndTheOthersLand() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "goorders404"))
            #expect(try await harness.googleVoided().exitCode == 0)
            let before = try Self.amounts(harness)
            #expect(before.store > 100 && before.other == 0, "\(before)")
            // Seven priced orders forgotten, and one order Google does not know, in the ledger.
            let connection = try harness.connection()
            let app = harness.stores.app(.google)
            let known: [String] = try connection.query(
                "SELECT DISTINCT order_id FROM refund WHERE platform = 'google' ORDER BY 1 LIMIT 7"
            ).map { try $0.decode("order_id") }
            try connection.execute(
                "DELETE FROM google_order WHERE order_id = ANY ($1::text[])", [PostgresTextArray(known)])
            try connection.execute(
                """
                UPDATE refund SET amount_source = NULL, gross_amount = NULL, tax_amount = NULL
                WHERE order_id = ANY ($1::text[])
                """, [PostgresTextArray(known)])
            let unknown = "GPA.0000-0000-0000-99999"
            try connection.execute(
                """
                INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, payload)
                VALUES ($1, 'google', $2, now(), 'full', '{}')
                """, [app.id, unknown])
            let callsBefore = orderCalls(simulator)
            let ids = [unknown] + known
            let result = try await harness.runner().run(job: "orders_test", app: app, waitForLock: false) {
                environment in
                let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
                let summary = try await GoogleOrderAmounts(app: app, client: client, prices: ConfiguredPrices())
                    .fetch(orderIds: ids, purpose: .incremental, in: environment)
                #expect(summary.notFound == 1 && summary.orders == 7 && !summary.stopped, "\(summary)")
            }
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            // 8 ids: the whole call, then halves of 4, 2 and 1 on the side of the unknown one.
            #expect(orderCalls(simulator) - callsBefore == 7)
            let after = try Self.amounts(harness)
            #expect(after.store == before.store)
            #expect(after.notes["order_not_found"] == 1)
            let status: String = try connection.query(
                "SELECT status FROM google_order WHERE order_id = $1", [unknown])[0].decode("status")
            #expect(status == "not_found")
        }
    }

    @Test func withoutTheFinancialPermissionTheSyncGoesOnAndAmountsStayEstimatedOrUnknown() async throws {
        var options = Self.options()
        options.ordersPermissionDenied = true
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "goorders403"))
            let expected = harness.firstWindowTruth(now: harness.stores.now())
            let result = try await harness.googleVoided()
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids().count == expected.count)
            let amounts = try Self.amounts(harness)
            #expect(amounts.store == 0 && amounts.other == expected.count)
            #expect((amounts.notes["no_permission"] ?? 0) > 0)
            // One refused call, then no more this run.
            let refused = simulator.statistics().filter { $0.endpoint == .googleOrders }.map(\.granted).reduce(0, +)
            #expect(refused == 1)
        }
    }

    @Test func aPendingRefundIsAskedAgainUntilSettled() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "goorderspend"))
            let truth = simulator.groundTruth()
            let pendingTruth = truth.googleVoids.filter {
                $0.recorded && $0.voidedQuantity != nil && $0.processedMillis > truth.nowMillis
            }
            try #require(!pendingTruth.isEmpty, "the scenario has parts still pending")
            #expect(try await harness.googleVoided().exitCode == 0)
            let first = try Self.amounts(harness)
            #expect((first.notes["pending"] ?? 0) >= 1, "\(first)")
            #expect(first.other == 0)
            // Three days on, Google has processed them: the next run's backlog settles them.
            simulator.clock.advance(millis: 3 * 86_400_000 + 60_000)
            #expect(try await harness.googleVoided().exitCode == 0)
            let later = simulator.groundTruth()
            let stillPendingAtGoogle = Set(
                later.googleVoids.filter { $0.voidedQuantity != nil && $0.processedMillis > later.nowMillis }
                    .map { "\($0.orderId) \($0.voidedTimeMillis):\($0.voidedQuantity!)" })
            let storedPending = Set(
                try harness.connection().query(
                    "SELECT order_id || ' ' || part_key AS k FROM refund WHERE amount_note = 'pending'"
                ).map { try $0.decode("k", as: String.self) })
            #expect(
                storedPending.isSubset(of: stillPendingAtGoogle), "\(storedPending.subtracting(stillPendingAtGoogle))")
            let firstPending = Set(pendingTruth.map { "\($0.orderId) \($0.voidedTimeMillis):\($0.voidedQuantity!)" })
            #expect(storedPending.isDisjoint(with: firstPending), "the parts pending on the first night are settled")
        }
    }

    @Test func theDailyBudgetStopsOnlyTheAmountsAndTheNextRunCatchesUp() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "goordersquota")
            let appId = stores.app(.google).id
            let tight = JobHarness(
                stores: stores,
                policy: QuotaPolicy(
                    defaultLimits: QuotaLimits(),
                    appLimits: [appId: QuotaLimits().overriding(.googleOrders, dailyCap: 1)]))
            let expected = tight.firstWindowTruth(now: stores.now())
            #expect(JobHarness.pages(expected.count) >= 2)
            // The amounts backlog's mark (GoogleOrderStore+Backlog.swift), set long ago: a run that stopped asking
            // must leave it there, or the next run would not look at what this one left.
            let connection = try tight.connection()
            try connection.execute(
                "INSERT INTO google_backlog_mark VALUES ($1, now() - interval '10 days')", [appId])
            let markIsRecent = "SELECT asked_through > now() - interval '9 days' AS recent FROM google_backlog_mark"
            let result = try await tight.googleVoided()
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try connection.query(markIsRecent)[0].decode("recent") == false)
            // Every voided row is stored whatever the Orders quota (quantities of unfetched orders come later).
            #expect(
                Set(try tight.storedVoids().map { "\($0.orderId) \($0.partKey)" })
                    == Set(expected.map { "\($0.orderId) \($0.partKey)" }))
            let first = try Self.amounts(tight)
            #expect(first.store > 0 && first.other > 0, "\(first)")
            #expect(orderCalls(simulator) == 1)
            // A later run (here: a budget to spare) fetches what was left.
            let next = JobHarness(stores: stores)
            #expect(try await next.googleVoided().exitCode == 0)
            let second = try Self.amounts(next)
            #expect(second.other == 0 && second.store == expected.count, "\(second)")
            #expect(try next.storedVoids() == expected)
            #expect(try connection.query(markIsRecent)[0].decode("recent") == true, "a run that asked all moves it")
        }
    }

    @Test func refundsWithoutRevocationAreFoundInKnownOrders() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "goordersnorev"))
            let app = harness.stores.app(.google)
            let truth = simulator.groundTruth()
            let silent = truth.googleRefundsWithoutRevocation.filter { $0.app == app.id && $0.isLatestOrder }
            try #require(silent.count >= 5, "the scenario refunds some current orders without revoking them")
            // The subscriptions and their current orders, as the recheck keeps them (latestSuccessfulOrderId); and
            // as many subscriptions whose current order was not refunded.
            let others = truth.googleVoids.filter { $0.app == app.id && $0.isSubscription }.prefix(5)
            let connection = try harness.connection()
            #expect(try await harness.googleVoided().exitCode == 0)
            let voidedRows: Int = try connection.query("SELECT count(*) AS n FROM refund WHERE revoked")[0].decode("n")
            try Self.insertActiveSubscriptions(
                connection, appId: app.id,
                silent.map { ($0.purchaseToken, $0.orderId) } + others.map { ($0.purchaseToken + "-other", $0.orderId) }
            )
            // One of them has a voided row waiting in the quarantine (its types were wrong): that order was revoked,
            // so it is not asked as a refund without revocation.
            let held = silent[0].orderId
            try connection.execute(
                """
                INSERT INTO quarantine (app_id, job, natural_key, raw, reason)
                VALUES ($1, 'google_voided', $2, $3, 'voidedTimeMillis: expected a number')
                """, [app.id, held, "{\"orderId\":\"\(held)\",\"voidedTimeMillis\":true}"])
            #expect(try await harness.googleVoided().exitCode == 0)
            let rows = try connection.query(
                """
                SELECT order_id, gross_amount, tax_amount, currency, part_key FROM refund
                WHERE NOT revoked AND part_key = 'orders:refund' ORDER BY order_id
                """)
            let found = Dictionary(
                uniqueKeysWithValues: try rows.map { row in
                    (try row.decode("order_id", as: String.self), row)
                })
            #expect(found.count == Set(silent.map(\.orderId)).count - 1)
            #expect(found[held] == nil, "an order whose voided row waits in the quarantine was taken as not revoked")
            for refund in silent where refund.orderId != held {
                let row = try #require(found[refund.orderId])
                #expect(try row.decode("gross_amount", as: Int64.self) == refund.totalNanos)
                #expect(try row.decode("tax_amount", as: Int64.self) == refund.taxNanos)
                #expect(try row.decode("currency", as: String.self) == refund.currency)
                #expect(try row.decode("part_key", as: String.self) == "orders:refund")
            }
            // No revocation: the subscriptions keep their state; the voided rows are as they were.
            let states: Int = try connection.query(
                "SELECT count(*) AS n FROM subscription WHERE state <> 'active'")[0].decode("n")
            #expect(states == 0)
            let revokedRows: Int = try connection.query("SELECT count(*) AS n FROM refund WHERE revoked")[0].decode("n")
            #expect(revokedRows == voidedRows)
            // A third run finds nothing new and duplicates nothing.
            #expect(try await harness.googleVoided().exitCode == 0)
            let again: Int = try connection.query(
                "SELECT count(*) AS n FROM refund WHERE NOT revoked AND part_key = 'orders:refund'")[0].decode("n")
            #expect(again == found.count)
        }
    }
}
