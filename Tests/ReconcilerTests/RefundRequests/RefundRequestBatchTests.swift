import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting
import TestSupport
import Testing

@testable import Reconciler

/// The refund-request job's set statements on a real database, one per page, pull or group: a request, a message or
/// an outcome that comes twice in one statement, or came before, is stored and counted once, and every row of a
/// group gets its own values, none of another's.
@Suite("RefundRequest batches")
struct RefundRequestBatchTests {
    let received = Date(timeIntervalSince1970: 1_795_000_000)

    func database() throws -> PostgresConnection {
        let connection = try RefundRequestStoreTests().database()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.ios')")
        return connection
    }

    func review(_ messageId: String, order: String, token: String) -> NewRefundRequest {
        RefundRequestStoreTests().review(messageId, order: order, token: token, hoursAgo: 1)
    }

    func apple(_ uuid: String, transaction: String) -> NewRefundRequest {
        NewRefundRequest(
            store: .apple, requestId: uuid, transactionId: transaction, originalId: "o-\(transaction)",
            productId: "coins", productType: "Consumable", country: "FR", familyShared: false, reason: nil,
            pendingToken: nil, receivedAt: received, purchasedAt: nil, firstPurchasedAt: nil, expiresAt: nil,
            priceNanos: 990_000_000, currency: "EUR")
    }

    static func count(_ connection: PostgresConnection, _ sql: String) throws -> Int {
        try connection.query("SELECT count(*)::int AS n FROM \(sql)")[0].decode("n")
    }

    @Test func aPageStoresEachRequestOnceWhateverItsRepeats() throws {
        let connection = try database()
        defer { connection.close() }
        let google = RefundRequestStore(appId: "droid")
        #expect(try google.insert([review("m1", order: "GPA.1", token: "t1")], runId: nil, on: connection) == ["m1"])
        let pull = [
            review("m2", order: "GPA.2", token: "t2"), review("m2", order: "GPA.2", token: "t2"),  // a duplicate
            review("m1", order: "GPA.1", token: "t1"),  // redelivered
            review("m3", order: "GPA.2", token: "t2"),  // the same review under another message id
            review("m4", order: "GPA.4", token: "t4"),
        ]
        #expect(try google.insert(pull, runId: 7, on: connection) == ["m2", "m4"])
        let rows = try connection.query(
            "SELECT request_id, first_seen_run FROM refund_request WHERE app_id = 'droid' ORDER BY id")
        #expect(try rows.map { try $0.decode("request_id", as: String.self) } == ["m1", "m2", "m4"])
        #expect(try rows.map { try $0.decodeIfPresent("first_seen_run", as: Int64.self) } == [nil, 7, 7])

        let ios = RefundRequestStore(appId: "ios")
        let page = [apple("u1", transaction: "1"), apple("u1", transaction: "1"), apple("u2", transaction: "1")]
        #expect(try ios.insert(page, runId: nil, on: connection) == ["u1", "u2"])
        #expect(try ios.insert(page, runId: nil, on: connection).isEmpty)
        let stored = try connection.query(
            """
            SELECT request_id, original_id, product_type, country, price_nanos, currency,
                   deadline - received_at = interval '12 hours' AS twelve
            FROM refund_request WHERE app_id = 'ios' ORDER BY id
            """)
        #expect(stored.count == 2)
        let first = try #require(stored.first)
        #expect(try first.decode("original_id", as: String.self) == "o-1")
        #expect(try first.decode("price_nanos", as: Int64.self) == 990_000_000)
        #expect(try first.decode("currency", as: String.self) == "EUR" && first.decode("twelve", as: Bool.self))
    }

    /// A job's environment on `connection` at `received`, counting into `counters`, and the `droid` app's RTDN intake.
    func pull(on connection: PostgresConnection, counters: JobCounters) -> (JobEnvironment, RTDNIntake) {
        let environment = JobEnvironment(
            connection: connection, gate: SimulatorSampleFuzzTests.OpenGate(), counters: counters, runId: nil,
            shutdown: ShutdownSignal(), dryRun: false, logger: Logger(label: "test"), progress: nil,
            now: { [received] in received })
        let intake = RTDNIntake(
            appId: "droid", requests: RefundRequestStore(appId: "droid"), ledger: RefundLedger(appId: "droid"))
        return (environment, intake)
    }

    @Test func aPullStoresEachMessageAndRequestOnceAndActsOnEachMessageOnce() throws {
        let connection = try database()
        defer { connection.close() }
        let counters = JobCounters()
        let (environment, intake) = pull(on: connection, counters: counters)
        func message(_ id: String, _ body: String) -> RTDNMessage {
            let json = #"{"packageName":"com.droid","eventTimeMillis":"1795000000000",\#(body)}"#
            return RTDNMessage(
                messageId: id, data: Data(json.utf8).base64EncodedString(), publishTime: nil, packageName: "com.droid")
        }
        let review = #""pendingRefundReviewNotification":{"orderId":"GPA.1","pendingRefundToken":"t1"}"#
        let change = #""subscriptionNotification":{"notificationType":4,"purchaseToken":"tok-1"}"#
        let first = [
            message("m1", review), message("m1", review), message("m2", review), message("s1", change),
            message("s1", change), message("x1", #""testNotification":{}"#),
        ]
        #expect(try connection.transaction { try intake.store(first, in: environment, on: $0) }.isEmpty)
        #expect(try Self.count(connection, "rtdn_message") == 4)
        #expect(try Self.count(connection, "refund_request") == 1)
        #expect(counters["requests_new"] == 1 && counters["rechecks_queued"] == 1)

        // Delivered again (the run stopped before acknowledging), with one new review.
        let again = [
            message("m1", review), message("s1", change),
            message("m3", #""pendingRefundReviewNotification":{"orderId":"GPA.3","pendingRefundToken":"t3"}"#),
        ]
        _ = try connection.transaction { try intake.store(again, in: environment, on: $0) }
        #expect(try Self.count(connection, "rtdn_message") == 5)
        #expect(try Self.count(connection, "refund_request") == 2)
        #expect(counters["requests_new"] == 2 && counters["rechecks_queued"] == 1)
        #expect(try Self.count(connection, "recheck_request") == 1)
    }

    @Test func eachRequestTakesTheLatestOutcomeOfItsTransactionOnce() throws {
        let connection = try database()
        defer { connection.close() }
        let ios = RefundRequestStore(appId: "ios")
        try ios.insert(
            [apple("u1", transaction: "1"), apple("u2", transaction: "2"), apple("u3", transaction: "3")], runId: nil,
            on: connection)
        let hour: TimeInterval = 3600
        let outcomes: [RefundRequestStore.Outcome] = [
            .init(transactionId: "1", decision: .refunded, revocationMilli: 40_000, at: received + hour),
            .init(transactionId: "1", decision: .refunded, revocationMilli: 40_000, at: received + hour),
            .init(transactionId: "2", decision: .declined, at: received + 2 * hour),
            .init(transactionId: "2", decision: .refunded, revocationType: "REFUND_FULL", at: received + 3 * hour),
            // Signed before the request came: not its outcome.
            .init(transactionId: "3", decision: .refunded, at: received - hour),
        ]
        #expect(try ios.recordOutcomes(outcomes, on: connection) == 2)
        let rows = try connection.query(
            """
            SELECT request_id, coalesce(decision, '-') AS d, coalesce(revocation_milli, 0) AS m,
                   coalesce(revocation_type, '-') AS t, coalesce(extract(epoch FROM decided_at)::bigint, 0) AS at
            FROM refund_request WHERE app_id = 'ios' ORDER BY request_id
            """
        ).map {
            "\(try $0.decode("d", as: String.self)) \(try $0.decode("m", as: Int.self)) "
                + "\(try $0.decode("t", as: String.self)) \(try $0.decode("at", as: Int64.self))"
        }
        #expect(rows == ["refunded 40000 - 1795003600", "refunded 0 REFUND_FULL 1795010800", "- 0 - 0"])
        // The same page read again (the overlap) changes nothing.
        #expect(try ios.recordOutcomes(outcomes, on: connection) == 0)
    }

    @Test func aGroupsVerdictsAndOrdersGoEachToItsOwnRequest() throws {
        let connection = try database()
        defer { connection.close() }
        let store = RefundRequestStore(appId: "droid")
        let reviews = (1...3).map { review("m\($0)", order: "GPA.\($0)", token: "t\($0)") }
        try store.insert(reviews, runId: nil, on: connection)
        // What the request said already is kept.
        try connection.execute("UPDATE refund_request SET country = 'FR' WHERE request_id = 'm1'")
        let ids = try store.open(limit: 10, now: received, on: connection).map(\.id).sorted()
        let order = GoogleReviewOrder(
            try JSONDecoder().decode(PlayOrder.self, from: Data(GoogleReviewAnswerTests.order.utf8)))
        try store.describe([(ids[0], order), (ids[1], nil)], on: connection)
        // Another run claimed the third meanwhile.
        let claim = RefundRequestStore.Claim(
            id: ids[2], verdict: RefundRequestVerdict(answer: nil, rule: "default", preference: .grant),
            facts: Data("{}".utf8), body: Data("{}".utf8))
        #expect(try store.claim([claim], on: connection) == [ids[2]])
        try store.record(
            [
                .init(id: ids[0], verdict: .init(answer: .noFacts, rule: nil, preference: nil), facts: nil),
                .init(
                    id: ids[1], verdict: .init(answer: .missed, rule: "rules[1]", preference: .decline),
                    facts: Data(#"{"f":2}"#.utf8)),
                .init(id: ids[2], verdict: .init(answer: .notSupported, rule: nil, preference: nil), facts: nil),
            ], on: connection)
        let rows = try connection.query(
            """
            SELECT coalesce(answer, '-') || ' ' || coalesce(rule, '-') || ' ' || coalesce(facts::text, '-') || ' '
                   || coalesce(product_id, '-') || ' ' || coalesce(country, '-') || ' ' || coalesce(original_id, '-')
                   || ' ' || coalesce(price_nanos::text, '-') || ' ' || (order_read_at IS NOT NULL) AS line
            FROM refund_request ORDER BY request_id
            """
        ).map { try $0.decode("line", as: String.self) }
        #expect(
            rows == [
                "no_facts - - coins.100 FR tok 4990000000 true", #"missed rules[1] {"f": 2} - - - - true"#,
                "- default {} - - - - false",
            ])
    }
}
