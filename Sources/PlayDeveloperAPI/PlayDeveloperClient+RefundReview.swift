import Foundation
import RateLimiting

extension PlayDeveloperClient {
    /// `orders.reviewrefund`: the developer's answer to a pending refund review (a chargeback). Google records the
    /// first answer for a notification and answers later ones OK without using them. Quota:
    /// ``StoreAPI/googleOrders``.
    /// See [orders.reviewrefund](https://developers.google.com/android-publisher/api-ref/rest/v3/orders/reviewrefund).
    /// - Parameter body: the request body as sent (and as the caller recorded it).
    /// - Throws: ``PlayAPIError`` or the gate's `QuotaError`.
    public func reviewRefund(packageName: String, orderId: String, body: Data) async throws {
        let endpoint = try customMethod(
            ["androidpublisher", "v3", "applications", packageName, "orders", orderId], verb: "reviewrefund",
            api: .googleOrders, packageName: packageName)
        _ = try await get(endpoint, purpose: .incremental, jsonBody: body)
    }

    /// Cloud Pub/Sub `subscriptions.pull` on `subscription` (`projects/<project>/subscriptions/<name>`): at most
    /// `maxMessages` messages, none when nothing waits. The server may hold a pull open until a message comes, for a
    /// time Google bounds but does not state: one that outlasts the request timeout means nothing came, and is not
    /// retried (a message in flight then is delivered again after its ack deadline). Call it on a client made with
    /// ``ServiceAccountAuthenticator/pubsubScope`` and the Pub/Sub host as its base URL. Quota:
    /// ``StoreAPI/googlePubSub``.
    /// See [subscriptions.pull](https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions/pull).
    public func pull(subscription: String, maxMessages: Int) async throws -> [PubSubReceivedMessage] {
        let body = Data("{\"maxMessages\":\(maxMessages)}".utf8)
        let endpoint = try pubsubEndpoint(subscription, verb: "pull")
        let answer = try await get(endpoint, purpose: .incremental, jsonBody: body, answerOnTimeout: Data("{}".utf8))
        return try decode(endpoint, answer) { try JSONDecoder().decode(PubSubPullResponse.self, from: $0) }
            .receivedMessages ?? []
    }

    /// Cloud Pub/Sub `subscriptions.acknowledge`: the messages are not delivered again.
    /// See [subscriptions.acknowledge](https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions/acknowledge).
    public func acknowledge(subscription: String, ackIds: [String]) async throws {
        guard !ackIds.isEmpty else { return }
        let body = try JSONEncoder().encode(["ackIds": ackIds])
        _ = try await get(try pubsubEndpoint(subscription, verb: "acknowledge"), purpose: .incremental, jsonBody: body)
    }

    private func pubsubEndpoint(_ subscription: String, verb: String) throws -> Endpoint {
        try customMethod(
            ["v1"] + subscription.split(separator: "/").map(String.init), verb: verb, api: .googlePubSub,
            packageName: "")
    }

    /// A POST to a custom method, `<segments>:<verb>` (Google's REST style for methods beyond get and list).
    private func customMethod(_ segments: [String], verb: String, api: StoreAPI, packageName: String) throws
        -> Endpoint
    {
        let label = PlayURL.label(method: "POST", segments: segments) + ":\(verb)"
        guard let base = PlayURL.make(base: configuration.baseURL, segments: segments),
            let url = URL(string: base.absoluteString + ":\(verb)")
        else {
            throw PlayAPIError(
                .invalidArgument, "cannot build the request URL", app: app,
                packageName: packageName.isEmpty ? nil : packageName, request: label)
        }
        return Endpoint(api: api, packageName: packageName, url: url, label: label)
    }
}

/// The answer of `subscriptions.pull`.
struct PubSubPullResponse: Decodable {
    var receivedMessages: [PubSubReceivedMessage]?
}

/// One delivery of a Pub/Sub message: the same message may be delivered again (with another `ackId`).
public struct PubSubReceivedMessage: Decodable, Sendable, Equatable {
    /// The id to acknowledge this delivery with.
    public var ackId: String
    /// The message.
    public var message: PubSubMessage
    /// How many times it was delivered, when the subscription has a dead-letter policy.
    public var deliveryAttempt: Int?
}

/// A Pub/Sub message.
public struct PubSubMessage: Decodable, Sendable, Equatable {
    /// Base64 of the payload (for RTDN, a `DeveloperNotification` JSON).
    public var data: String?
    /// Unique per topic: a redelivered or duplicated message keeps it.
    public var messageId: String
    /// When it was published (RFC 3339).
    public var publishTime: String?
}
