import Foundation
import Testing

@testable import StoreSimulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Google's decision on a refund review once it ends (24 h after the notification), seen the three ways a client can
/// see it: the order, the voided list and a voided-purchase RTDN; and `orders.reviewrefund` counted on its own.
@Suite("Google refund review outcomes")
struct RefundReviewOutcomeTests {
    struct Review {
        var orderId: String
        var token: String
        var notifiedMillis: Int64
    }

    static let scopes = "https://www.googleapis.com/auth/androidpublisher https://www.googleapis.com/auth/pubsub"

    static func options() -> SimulatorOptions {
        var options = TestKeys.options(seed: 12, subscriptions: 200, refunds: 20)
        options.scenario.refundReviews = 8
        return options
    }

    /// Every message the app's subscription delivers now, decoded.
    static func pull(_ client: TestClient, subscription: String, bearer: String) async throws -> [[String: Any]] {
        let url = try #require(URL(string: client.simulator.baseURL.absoluteString + "/v1/\(subscription):pull"))
        let answer = try await client.send(
            "POST", url, bearer: bearer, body: Data(#"{"maxMessages":1000}"#.utf8), contentType: "application/json")
        #expect(answer.status == 200)
        let received = try answer.json["receivedMessages"] as? [[String: Any]] ?? []
        return try received.map { item in
            let message = try #require(item["message"] as? [String: Any])
            let text = try #require(message["data"] as? String)
            let data = try #require(Data(base64Encoded: text))
            let notification = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            return try #require(notification)
        }
    }

    /// The pending refund reviews the subscription delivers, once each (Pub/Sub delivers some messages twice).
    static func reviews(_ client: TestClient, subscription: String, bearer: String) async throws -> [Review] {
        var reviews: [Review] = []
        for notification in try await pull(client, subscription: subscription, bearer: bearer) {
            guard let review = notification["pendingRefundReviewNotification"] as? [String: Any],
                let orderId = review["orderId"] as? String, !reviews.contains(where: { $0.orderId == orderId })
            else { continue }
            reviews.append(
                Review(
                    orderId: orderId, token: review["pendingRefundToken"] as? String ?? "",
                    notifiedMillis: Int64(notification["eventTimeMillis"] as? String ?? "") ?? 0))
        }
        return reviews
    }

    static func answer(_ client: TestClient, _ package: String, _ review: Review, _ preference: String, bearer: String)
        async throws
    {
        let url = try #require(
            URL(
                string: client.simulator.baseURL.absoluteString
                    + "/androidpublisher/v3/applications/\(package)/orders/\(review.orderId):reviewrefund"))
        let body =
            #"{"pendingRefundToken":"\#(review.token)","refundPreference":"\#(preference)","#
            + #""sampleContentProvided":false}"#
        let answer = try await client.send(
            "POST", url, bearer: bearer, body: Data(body.utf8), contentType: "application/json")
        #expect(answer.status == 200)
    }

    static func order(_ client: TestClient, _ package: String, _ orderId: String, bearer: String) async throws
        -> [String: Any]
    {
        let url = client.simulator.googleAPIBaseURL.appendingPathComponent(
            "androidpublisher/v3/applications/\(package)/orders/\(orderId)")
        let answer = try await client.send("GET", url, bearer: bearer)
        #expect(answer.status == 200)
        return try answer.json
    }

    @Test func anApprovedReviewEndsRefundedADeclinedOneDoesNotTheRestAsTheSeedSays() async throws {
        try await StoreSimulator.withRunning(Self.options()) { sim in
            let client = TestClient(sim)
            let app = try #require(sim.apps.first { $0.platform == .google })
            let subscription = sim.rtdnSubscription(app: app.id)
            // One token for both APIs the test calls: the Play Developer API and Pub/Sub.
            var bearer = try await client.googleAccessToken(scope: Self.scopes)
            let reviews = try await Self.reviews(client, subscription: subscription, bearer: bearer)
            try #require(reviews.count == 8)
            let (approved, declined) = (reviews[0], reviews[1])
            try await Self.answer(client, app.storeId, approved, "APPROVE", bearer: bearer)
            try await Self.answer(client, app.storeId, declined, "DECLINE", bearer: bearer)
            // Google keeps the first answer: the second is answered OK and changes nothing.
            try await Self.answer(client, app.storeId, declined, "APPROVE", bearer: bearer)
            try await Self.answer(client, app.storeId, reviews[2], "NEUTRAL", bearer: bearer)
            // Before the review ends, the order is as it was.
            #expect(
                try await Self.order(client, app.storeId, approved.orderId, bearer: bearer)["state"] as? String
                    == "PROCESSED")

            let latestEnd = reviews.map(\.notifiedMillis).max()! + 86_400_000
            sim.clock.set(millis: latestEnd + 60_000)
            bearer = try await client.googleAccessToken(scope: Self.scopes)
            let truth = Set(sim.groundTruth().googleVoids.filter { $0.voidedReason == 7 }.map(\.orderId))
            #expect(truth.contains(approved.orderId) && !truth.contains(declined.orderId))
            let notified = try await Self.pull(client, subscription: subscription, bearer: bearer).compactMap {
                notification -> (String, Int64)? in
                guard let void = notification["voidedPurchaseNotification"] as? [String: Any] else { return nil }
                return (void["orderId"] as? String ?? "", Int64(notification["eventTimeMillis"] as? String ?? "") ?? 0)
            }
            let listed = try await client.send(
                "GET", client.voidedURL(["type": "1"], package: app.storeId), bearer: bearer)
            let rows = try listed.json["voidedPurchases"] as? [[String: Any]] ?? []
            for review in reviews {
                let end = review.notifiedMillis + 86_400_000
                let order = try await Self.order(client, app.storeId, review.orderId, bearer: bearer)
                let refunded = order["state"] as? String == "REFUNDED"
                #expect(refunded == truth.contains(review.orderId), "\(review.orderId)")
                let event = (order["orderHistory"] as? [String: Any])?["refundEvent"] as? [String: Any]
                #expect(event?["refundReason"] as? String == (refunded ? "CHARGEBACK" : nil))
                #expect(event?["eventTime"] as? String == (refunded ? TimeFormat.rfc3339(millis: end) : nil))
                let row = rows.first { $0["orderId"] as? String == review.orderId }
                #expect(row?["voidedTimeMillis"] as? String == (refunded ? String(end) : nil), "\(review.orderId)")
                if let row {
                    // Google voided it, for a chargeback.
                    #expect((row["voidedSource"] as? NSNumber)?.intValue == 2)
                    #expect((row["voidedReason"] as? NSNumber)?.intValue == 7)
                }
                #expect(notified.contains { $0 == (review.orderId, end) } == refunded, "\(review.orderId)")
            }

            let stats = sim.statistics().filter { $0.app == app.id }
            #expect(stats.first { $0.endpoint == .googleReviewRefund }?.granted == 4)
            #expect(stats.first { $0.endpoint == .googleOrders }?.granted == 1 + reviews.count)
        }
    }

    @Test func aReviewWithoutPreferenceEndsRefundedOnceInTwo() {
        let reviews = (0..<1000).map {
            PendingRefundReview(app: "a", orderId: "GPA.\($0)", token: "t", plan: $0, charge: 0, notifiedMillis: 0)
        }
        let neutral = RefundReviewAnswer(
            app: "a", orderId: "", body: "", calls: 1, millis: 0, preference: "NEUTRAL")
        let late = RefundReviewAnswer(
            app: "a", orderId: "", body: "", calls: 1, millis: 86_400_001, preference: "APPROVE")
        let refunded = reviews.filter { RefundReviewOutcomes.refunds($0, answer: nil, seed: 7) }
        #expect((450...550).contains(refunded.count))
        #expect(
            reviews.allSatisfy {
                RefundReviewOutcomes.refunds($0, answer: neutral, seed: 7)
                    == RefundReviewOutcomes.refunds($0, answer: nil, seed: 7)
                    && RefundReviewOutcomes.refunds($0, answer: late, seed: 7)
                        == RefundReviewOutcomes.refunds($0, answer: nil, seed: 7)
            })
    }
}
