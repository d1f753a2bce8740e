import Foundation
import RateLimiting
import StoreHTTP
import Testing

@testable import PlayDeveloperAPI

extension PlayDeveloperClientTests {
    static let subscription = "projects/acme/subscriptions/storerecon-rtdn"

    /// Pub/Sub may hold a pull open until a message comes: one that outlasts the request timeout means nothing
    /// waited. It is not retried, and the run goes on to answer what it has.
    @Test func aPullThatTimesOutMeansNothingWaits() async throws {
        let harness = try ClientHarness([.token(), .timeout()])
        let messages = try await harness.client.pull(subscription: Self.subscription, maxMessages: 100)
        #expect(messages.isEmpty)
        // The token exchange, then one pull: not retried.
        #expect(harness.transport.requests.count == 2)
        #expect(harness.time.sleeps.isEmpty)
        let body = try #require(harness.transport.requests.last?.body)
        #expect(String(decoding: body, as: UTF8.self) == #"{"maxMessages":100}"#)
    }

    @Test func otherCallsThatTimeOutAreStillRetried() async throws {
        let harness = try ClientHarness([.token(), .timeout(), .json(200, "{}")])
        try await harness.client.acknowledge(subscription: Self.subscription, ackIds: ["a"])
        #expect(harness.transport.requests.count == 3)
    }

    @Test func aPullReturnsTheMessagesDelivered() async throws {
        let answer = #"{"receivedMessages":[{"ackId":"k1","message":{"data":"e30=","messageId":"m1"}}]}"#
        let harness = try ClientHarness([.token(), .json(200, answer)])
        let messages = try await harness.client.pull(subscription: Self.subscription, maxMessages: 100)
        #expect(messages.map(\.ackId) == ["k1"])
    }
}

extension PlayDeveloperClientTests {
    /// A refused pull names the Cloud IAM role it needs, not a Play Console permission, and no empty package.
    @Test func aRefusedPullNamesThePubSubRole() async throws {
        let denied =
            #"{"error":{"code":403,"message":"User not authorized to perform this action.","status":"PERMISSION_DENIED"}}"#
        let harness = try ClientHarness([.token(), .json(403, denied)])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.pull(subscription: Self.subscription, maxMessages: 10)
        }
        #expect(failure.code == .permissionDenied)
        #expect(failure.message.contains("Pub/Sub Subscriber role"), "\(failure)")
        #expect(failure.packageName == nil && !failure.description.contains("package ,"), "\(failure)")
    }
}
