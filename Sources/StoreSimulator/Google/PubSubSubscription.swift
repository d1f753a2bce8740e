import Foundation
import Synchronization

/// The RTDN pull subscriptions, one per Google app (`projects/storesim/subscriptions/<app id>-rtdn`), as Cloud
/// Pub/Sub behaves: a message published by the clock's now is delivered until it is acknowledged; a delivery not
/// acknowledged within the ack deadline is delivered again (with a new `ackId`), and every fifth message comes twice
/// in its first delivery (at least once, duplicates expected). The first `ackRefusals` acknowledge calls are
/// refused (403), as when the subscriber role is missing: the messages stay unacknowledged.
final class PubSubSubscriptions: Sendable {
    private struct Subscription {
        var messages: [SimulatedRTDNMessage]
        var acked: Set<Int> = []
        var leaseEnds: [Int: Int64] = [:]
        var deliveries: [Int: Int] = [:]
    }

    private struct State {
        var subscriptions: [String: Subscription] = [:]
        var ackIds: [String: (String, Int)] = [:]
        var issued = 0
        var ackRefusals: Int
    }

    private let state: Mutex<State>
    private let ackDeadlineMillis: Int64
    /// Every pending refund review the subscriptions carry, by order id.
    let reviews: [String: PendingRefundReview]
    /// The reviews of each app (by its id), by the end of their review.
    let reviewsByApp: [String: [PendingRefundReview]]

    init(scenario: Scenario, ackDeadlineMillis: Int64, ackRefusals: Int) {
        var subscriptions: [String: Subscription] = [:]
        var reviewsByApp: [String: [PendingRefundReview]] = [:]
        for app in scenario.spec.apps.indices where scenario.spec.apps[app].platform == .google {
            let messages = scenario.rtdnMessages(app: app)
            subscriptions[Self.name(app: scenario.spec.apps[app].id)] = Subscription(messages: messages)
            reviewsByApp[scenario.spec.apps[app].id] = messages.compactMap(\.review).sorted {
                ($0.endMillis, $0.orderId) < ($1.endMillis, $1.orderId)
            }
        }
        state = Mutex(State(subscriptions: subscriptions, ackRefusals: ackRefusals))
        self.ackDeadlineMillis = ackDeadlineMillis
        self.reviewsByApp = reviewsByApp
        reviews = Dictionary(reviewsByApp.values.joined().map { ($0.orderId, $0) }) { first, _ in first }
    }

    /// The subscription of an app.
    static func name(app: String) -> String { "projects/storesim/subscriptions/\(app)-rtdn" }

    /// Whether the subscription exists.
    func exists(_ name: String) -> Bool { state.withLock { $0.subscriptions[name] != nil } }

    /// The next deliveries: `(ackId, message)`, at most `max`.
    func pull(_ name: String, max: Int, now: Int64) -> [(String, SimulatedRTDNMessage)] {
        state.withLock { state in
            guard var subscription = state.subscriptions[name] else { return [] }
            var out: [(String, SimulatedRTDNMessage)] = []
            for (index, message) in subscription.messages.enumerated() where out.count < max {
                guard message.publishMillis <= now, !subscription.acked.contains(index),
                    (subscription.leaseEnds[index] ?? .min) <= now
                else { continue }
                let first = subscription.deliveries[index, default: 0] == 0
                for _ in 0..<(first && index % 5 == 0 ? 2 : 1) where out.count < max {
                    state.issued += 1
                    let ackId = "ack-\(state.issued)-\(index)"
                    state.ackIds[ackId] = (name, index)
                    out.append((ackId, message))
                }
                subscription.deliveries[index, default: 0] += 1
                subscription.leaseEnds[index] = now + ackDeadlineMillis
            }
            state.subscriptions[name] = subscription
            return out
        }
    }

    /// Acknowledges deliveries; false when the call is refused.
    func acknowledge(_ name: String, ackIds: [String]) -> Bool {
        state.withLock { state in
            if state.ackRefusals > 0 {
                state.ackRefusals -= 1
                return false
            }
            for ackId in ackIds {
                guard let (subscription, index) = state.ackIds[ackId], subscription == name else { continue }
                state.subscriptions[name]?.acked.insert(index)
            }
            return true
        }
    }

    /// The pending refund token of an order's review, if it has one.
    func pendingToken(app: String, orderId: String) -> String? {
        reviews[orderId].flatMap { $0.app == app ? $0.token : nil }
    }

    /// Publishes each of `messages` (keyed by its `messageId`) that the subscription has not had yet.
    func publishOnce(_ name: String, _ messages: [SimulatedRTDNMessage]) {
        state.withLock { state in
            guard var subscription = state.subscriptions[name] else { return }
            let known = Set(subscription.messages.map(\.messageId))
            subscription.messages += messages.filter { !known.contains($0.messageId) }
            state.subscriptions[name] = subscription
        }
    }

    /// Messages not acknowledged yet.
    func unacknowledged(app: String) -> Int {
        state.withLock { state in
            guard let subscription = state.subscriptions[Self.name(app: app)] else { return 0 }
            return subscription.messages.count - subscription.acked.count
        }
    }
}

/// What `orders.reviewrefund` received: the first answer per order (Google keeps it) and the calls in all.
public struct RefundReviewAnswer: Sendable, Equatable {
    /// The app's id.
    public var app: String
    /// The order.
    public var orderId: String
    /// The first body, as received.
    public var body: String
    /// Calls for this order (later ones are answered OK and ignored).
    public var calls: Int
    /// When the first answer came (simulator clock, ms).
    public var millis: Int64
    /// `refundPreference` of the first body.
    var preference: String
}

/// Every `orders.reviewrefund` answer.
final class RefundReviewAnswers: Sendable {
    private let answers = Mutex<[String: RefundReviewAnswer]>([:])

    func record(app: String, orderId: String, body: String, preference: String, millis: Int64) {
        answers.withLock { answers in
            let key = "\(app) \(orderId)"
            if answers[key] != nil {
                answers[key]?.calls += 1
            } else {
                answers[key] = RefundReviewAnswer(
                    app: app, orderId: orderId, body: body, calls: 1, millis: millis, preference: preference)
            }
        }
    }

    /// The first answer for an order, if any.
    func first(app: String, orderId: String) -> RefundReviewAnswer? {
        answers.withLock { $0["\(app) \(orderId)"] }
    }

    var all: [RefundReviewAnswer] {
        answers.withLock { Array($0.values) }.sorted { ($0.app, $0.orderId) < ($1.app, $1.orderId) }
    }
}
