import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// Google's refund reviews end to end: the RTDN subscription pulled (redeliveries, duplicates, a run stopped between
/// storing and acknowledging) and `orders.reviewrefund` answered once per review.
@Suite("storerecon run refund-requests, Google reviews, end to end")
struct RefundReviewsTests {
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var spec = ScenarioSpec(
            seed: 40, anchorMillis: now, subscriptions: 60, oneTimePurchases: 40, refunds: 0, historyDays: 40,
            futureDays: 1, sandboxShare: 0)
        spec.refundReviews = 12
        var options = SimulatorOptions(scenario: spec)
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        // Every unacknowledged message comes again on the next pull, and the first acknowledge is refused: the
        // first run stores what it pulled and stops before acknowledging it.
        options.pubsubAckDeadlineMillis = 0
        options.pubsubAckRefusals = 1
        return options
    }

    struct Review {
        var orderId: String
        var token: String
        var missed: Bool
    }

    func run(_ stores: SimulatedStores, _ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await BuiltExecutable("storerecon").run(arguments + ["--config", stores.configPath])
    }

    func reviews(_ connection: PostgresConnection) throws -> [Review] {
        try connection.query(
            """
            SELECT transaction_id, pending_token, deadline <= now() AS missed FROM refund_request
            WHERE store = 'google' ORDER BY transaction_id
            """
        ).map {
            Review(
                orderId: try $0.decode("transaction_id"), token: try $0.decode("pending_token"),
                missed: try $0.decode("missed"))
        }
    }

    func count(_ connection: PostgresConnection, _ sql: String) throws -> Int {
        try connection.query(sql)[0].decode("n")
    }

    /// The facts for the reviews found, by their place: consumed 80 %, undelivered without consent, none.
    func factsCSV(_ found: [Review]) -> String {
        var csv = "platform,purchase_id,customer_consented,delivery_status,consumption_percent,"
        csv += "sample_content_provided,as_of\n"
        for (index, review) in found.enumerated() where index % 3 != 2 {
            csv +=
                index % 3 == 0
                ? "google,\(review.orderId),true,delivered,80,false,2026-07-01T00:00:00Z\n"
                : "google,\(review.orderId),false,undelivered_quality_issue,,true,2026-07-01T00:00:00Z\n"
        }
        return csv
    }

    /// The body Google must receive for the review at `index` of the facts above, written by hand; nil when
    /// nothing may be sent (a missed deadline or no facts).
    func expectedBody(_ index: Int, _ review: Review) -> String? {
        review.missed || index % 3 == 2
            ? nil
            : index % 3 == 0
                ? #"{"consumptionPercentageMilliunits":80000,"pendingRefundToken":"\#(review.token)","refundPreference":"DECLINE","sampleContentProvided":false}"#
                : #"{"consumptionPercentageMilliunits":0,"pendingRefundToken":"\#(review.token)","refundPreference":"APPROVE","sampleContentProvided":true}"#
    }

    /// The simulator's stores with the Google app reading its RTDN subscription and answering by two rules (80 %
    /// consumed: decline; undelivered: grant); returns them and the Google app's id.
    func configured(_ simulator: StoreSimulator, databasePrefix: String) throws -> (SimulatedStores, String) {
        let stores = try SimulatedStores(simulator: simulator, databasePrefix: databasePrefix)
        let android = try #require(simulator.apps.first { $0.platform == .google }).id
        let settings = """
                rtdnSubscription: \(simulator.rtdnSubscription(app: android))
                pubsubBaseURL: \(simulator.baseURL.absoluteString)
                refundRequests:
                  rules:
                    - { when: { consumedPercentAtLeast: 50 }, prefer: decline }
                    - { when: { delivered: false }, prefer: grant }

            """
        let yaml = try String(contentsOfFile: stores.configPath, encoding: .utf8)
        try yaml.replacingOccurrences(of: "    platform: google\n", with: "    platform: google\n" + settings)
            .write(toFile: stores.configPath, atomically: true, encoding: .utf8)
        return (stores, android)
    }

    @Test func everyReviewIsAnsweredOnceThoughMessagesComeAgain() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let (stores, android) = try configured(simulator, databasePrefix: "refundreviews")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }

            // First run: every message is stored, then the acknowledgement is refused: the run stops. The test
            // notification, 12 reviews, a voided-purchase one per review ended refunded (the scenario's only voids).
            let first = try await run(stores, ["run", "refund-requests"])
            #expect(first.status != 0)
            let messages = 13 + simulator.groundTruth().googleVoids.filter { $0.app == android }.count
            #expect(try count(connection, "SELECT count(*)::int AS n FROM rtdn_message") == messages)
            #expect(try count(connection, "SELECT count(*)::int AS n FROM rtdn_message WHERE kind = 'test'") == 1)
            let found = try reviews(connection)
            #expect(found.count == 12)
            #expect(simulator.unacknowledgedRTDN(app: android) == messages)
            #expect(simulator.refundReviewAnswers().isEmpty)

            let facts = stores.directory.appendingPathComponent("facts.csv").path
            try factsCSV(found).write(toFile: facts, atomically: true, encoding: .utf8)
            #expect(try await run(stores, ["import", "consumption", facts]).status == 0)

            // Second run: the same messages come again and are acknowledged; each review is answered once.
            let second = try await run(stores, ["run", "refund-requests"])
            #expect(second.status == 0, "\(second.stderr.suffix(2000))")
            #expect(simulator.unacknowledgedRTDN(app: android) == 0)
            #expect(try reviews(connection).count == 12)
            let sent = Dictionary(uniqueKeysWithValues: simulator.refundReviewAnswers().map { ($0.orderId, $0) })
            var expected = 0
            for (index, review) in found.enumerated() {
                let body = expectedBody(index, review)
                #expect(sent[review.orderId]?.body == body, "review \(index): \(review)")
                if body != nil { expected += 1 }
            }
            #expect(expected > 0)
            #expect(sent.count == expected)
            #expect(
                try count(connection, "SELECT count(*)::int AS n FROM refund_request WHERE answer = 'no_facts'")
                    == found.enumerated().filter { $0.offset % 3 == 2 && !$0.element.missed }.count)

            // Third run: nothing is pulled and nothing is sent again.
            let third = try await run(stores, ["run", "refund-requests"])
            #expect(third.status == 0, "\(third.stderr.suffix(2000))")
            #expect(simulator.refundReviewAnswers().count == expected)
            #expect(simulator.refundReviewAnswers().allSatisfy { $0.calls == 1 })
        }
    }
}
