import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// The RTDN messages that are not refund reviews, end to end: a voided purchase is in the ledger after
/// `run refund-requests` and stays one row when the nightly voided list brings the same order; a subscription change
/// makes the next `recheck` ask about that subscription, known or not, whatever its expiry.
@Suite("storerecon run refund-requests, voided and subscription notifications, end to end")
struct RTDNNoticesTests {
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var spec = ScenarioSpec(
            seed: 41, anchorMillis: now, subscriptions: 60, oneTimePurchases: 40, refunds: 40, historyDays: 25,
            futureDays: 1, sandboxShare: 0)
        spec.rtdnNotices = 4
        var options = SimulatorOptions(scenario: spec)
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        // The first acknowledge is refused and every message unacknowledged comes again at once: the second run
        // reads every message a second time.
        options.pubsubAckDeadlineMillis = 0
        options.pubsubAckRefusals = 1
        return options
    }

    /// A refund row as the test compares it.
    struct Row: Equatable {
        var id: Int64
        var orderId: String
        var product: String?
        var gross: Int64?
        var source: String?
        var currency: String?
        var reasonCode: Int?
        var purchased: Bool
        var fromList: Bool
    }

    func rows(_ connection: PostgresConnection, orders: [String]) throws -> [Row] {
        try connection.query(
            """
            SELECT id, order_id, product_id, gross_amount, amount_source, currency, reason_code,
                   purchased_at IS NOT NULL AS purchased, payload ? 'voidedTimeMillis' AS from_list
            FROM refund WHERE app_id = 'demo-android' AND order_id = ANY ($1::text[]) ORDER BY order_id, id
            """, [PostgresTextArray(orders)]
        ).map {
            Row(
                id: try $0.decode("id"), orderId: try $0.decode("order_id"),
                product: try $0.decodeIfPresent("product_id"),
                gross: try $0.decodeIfPresent("gross_amount"), source: try $0.decodeIfPresent("amount_source"),
                currency: try $0.decodeIfPresent("currency"), reasonCode: try $0.decodeIfPresent("reason_code"),
                purchased: try $0.decode("purchased"), fromList: try $0.decode("from_list"))
        }
    }

    func strings(_ connection: PostgresConnection, _ sql: String, _ parameters: [String] = []) throws -> [String] {
        try connection.query(sql, parameters).map { try $0.decode("v") }
    }

    /// The simulator's stores with the Google app's RTDN subscription configured and its subscriptions imported,
    /// none of them near expiry, watched or due: only a queued request can make the recheck ask.
    struct Harness {
        let simulator: StoreSimulator
        let stores: SimulatedStores
        let binary: BuiltExecutable
        let config: [String]
        let connection: PostgresConnection
        let android: String

        init(_ simulator: StoreSimulator) async throws {
            self.simulator = simulator
            android = try #require(simulator.apps.first { $0.platform == .google }).id
            stores = try SimulatedStores(simulator: simulator, databasePrefix: "rtdnnotices")
            let settings = """
                    rtdnSubscription: \(simulator.rtdnSubscription(app: android))
                    pubsubBaseURL: \(simulator.baseURL.absoluteString)

                """
            let yaml = try String(contentsOfFile: stores.configPath, encoding: .utf8)
            try yaml.replacingOccurrences(of: "    platform: google\n", with: "    platform: google\n" + settings)
                .write(toFile: stores.configPath, atomically: true, encoding: .utf8)
            binary = try BuiltExecutable("storerecon")
            config = ["--app", android, "--config", stores.configPath]
            let csv = stores.directory.appendingPathComponent("subscriptions.csv")
            try SubscriptionExport.write(simulator.spec, to: csv)
            #expect(
                try await binary.run(["import", "subscriptions", csv.path, "--config", stores.configPath]).status == 0)
            connection = try PostgresConnection(conninfo: stores.conninfo)
            try connection.execute(
                """
                UPDATE subscription SET expires_at = now() + interval '200 days',
                    last_checked_at = now() - interval '1 day', expiry_changed_at = now() - interval '2 days',
                    state = 'active', flagged_at = NULL
                """)
        }

        func run(_ arguments: [String]) async throws -> BuiltExecutable.Outcome {
            try await binary.run(arguments + config)
        }
    }

    @Test func voidsAreRecordedOnceAndSubscriptionChangesAreRechecked() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let harness = try await Harness(simulator)
            defer { harness.connection.close() }
            let (full, recorded) = try await voidsAreRecordedAtOnce(harness)
            try await theNightlyListFillsTheSameRows(harness, full: full, recorded: recorded)
            try await queuedSubscriptionsAreRechecked(harness)
        }
    }

    /// First run: every message stored, the acknowledgement refused; the second run reads them all again. Each full
    /// void is one row, with the configured estimate where its product is known. Returns the full voids' orders and
    /// their rows.
    func voidsAreRecordedAtOnce(_ harness: Harness) async throws -> ([String], [Row]) {
        let connection = harness.connection
        #expect(try await harness.run(["run", "refund-requests"]).status != 0)
        let messages = try strings(connection, "SELECT kind AS v FROM rtdn_message ORDER BY kind")
        #expect(
            messages == Array(repeating: "subscription", count: 4) + ["test"]
                + Array(repeating: "voided_purchase", count: 4))
        let full = try strings(
            connection,
            """
            SELECT notification->'voidedPurchaseNotification'->>'orderId' AS v FROM rtdn_message
            WHERE kind = 'voided_purchase' AND notification->'voidedPurchaseNotification'->>'refundType' = '1'
            ORDER BY 1
            """)
        #expect(!full.isEmpty)
        let recorded = try rows(connection, orders: full)
        let second = try await harness.run(["run", "refund-requests"])
        #expect(second.status == 0, "\(second.stderr.suffix(2000))")
        #expect(harness.simulator.unacknowledgedRTDN(app: harness.android) == 0)
        #expect(try rows(connection, orders: full) == recorded, "a redelivered message changed the ledger")

        #expect(recorded.map(\.orderId) == full)
        let prices = Dictionary(uniqueKeysWithValues: harness.simulator.products.map { ($0.productId, $0) })
        for row in recorded {
            #expect(!row.fromList && row.reasonCode == nil && !row.purchased)
            if let product = row.product.flatMap({ prices[$0] }) {
                #expect(row.gross == product.priceMilli && row.source == "configured", "\(row)")
                #expect(row.currency == product.currency)
            } else {
                #expect(row.gross == nil && row.source == nil, "\(row)")
            }
        }
        #expect(recorded.contains { $0.source == "configured" })
        #expect(try strings(connection, "SELECT purchase_id AS v FROM recheck_request").count == 4)
        return (full, recorded)
    }

    /// The nightly voided list finds the same orders: one row each, the list's fields filled, the store's amount in
    /// place of the estimate.
    func theNightlyListFillsTheSameRows(_ harness: Harness, full: [String], recorded: [Row]) async throws {
        let sync = try await harness.run(["sync", "google-voided"])
        #expect(sync.status == 0, "\(sync.stderr.suffix(2000))")
        let synced = try rows(harness.connection, orders: full)
        #expect(synced.map(\.id) == recorded.map(\.id))
        for row in synced {
            #expect(row.fromList && row.reasonCode != nil && row.purchased, "\(row)")
            #expect(row.source == "store" && row.gross != nil, "\(row)")
        }
    }

    /// Every queued subscription is asked about, one of them not known before; a known one neither queued nor
    /// flagged is not; the queue is empty after.
    func queuedSubscriptionsAreRechecked(_ harness: Harness) async throws {
        let connection = harness.connection
        let queued = try strings(connection, "SELECT purchase_id AS v FROM recheck_request ORDER BY 1")
        let unknown = try #require(
            try strings(
                connection,
                """
                SELECT q.purchase_id AS v FROM recheck_request q
                WHERE NOT EXISTS (SELECT 1 FROM refund r WHERE r.original_id = q.purchase_id) ORDER BY 1 LIMIT 1
                """
            ).first)
        try connection.execute("DELETE FROM subscription WHERE app_id = 'demo-android' AND store_id = $1", [unknown])
        let control = try #require(
            try strings(
                connection,
                """
                SELECT store_id AS v FROM subscription WHERE app_id = 'demo-android' AND flagged_at IS NULL
                  AND NOT (store_id = ANY (ARRAY(SELECT purchase_id FROM recheck_request))) ORDER BY 1 LIMIT 1
                """
            ).first)
        let recheck = try await harness.run(["recheck"])
        #expect(recheck.status == 0, "\(recheck.stderr.suffix(2000))")
        let asked = Set(
            try strings(
                connection,
                """
                SELECT store_id AS v FROM subscription
                WHERE app_id = 'demo-android' AND last_checked_at > now() - interval '1 hour'
                """))
        #expect(asked.isSuperset(of: queued), "queued \(queued), asked \(asked)")
        #expect(!asked.contains(control))
        #expect(try strings(connection, "SELECT purchase_id AS v FROM recheck_request").isEmpty)
        let adopted = try strings(
            connection, "SELECT state AS v FROM subscription WHERE app_id = 'demo-android' AND store_id = $1",
            [unknown])
        #expect(adopted.count == 1 && adopted != ["unknown"], "\(adopted)")
    }
}
