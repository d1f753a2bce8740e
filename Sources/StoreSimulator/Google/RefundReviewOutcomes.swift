/// What Google decides when a refund review ends, 24 hours after its notification (`stores.md`, "Refund requests":
/// the outcome is the order voided or not by the time its review ends). The first `orders.reviewrefund` answer
/// received by then decides: `APPROVE` refunds the order, `DECLINE` keeps it; `NEUTRAL`, or no answer by the end,
/// leaves it to Google: one review in two (``neutralShare``) is refunded, picked by the seed and the order. A later
/// answer changes nothing. A refunded order is voided at the review's end: `orders.get` and `orders.batchget` show
/// it `REFUNDED` with a `CHARGEBACK` refund event, the voided list has it (`voidedSource` 2, Google; `voidedReason`
/// 7, chargeback; recorded at once), and the app's RTDN subscription gets a `voidedPurchaseNotification`.
///
/// Decided when asked, from the scenario, the answers and the clock: nothing runs when a review ends.
struct RefundReviewOutcomes {
    /// Of the reviews without a preference (`NEUTRAL` or unanswered), how many in ``neutralShare``.1 end refunded.
    static let neutralShare = (refunded: 1, of: 2)

    let state: SimulatorState

    /// Whether Google refunds the order of `review` once it ends, given the first answer for it (if any).
    static func refunds(_ review: PendingRefundReview, answer: RefundReviewAnswer?, seed: UInt64) -> Bool {
        switch answer.flatMap({ $0.millis <= review.endMillis ? $0.preference : nil }) {
        case "APPROVE":
            return true
        case "DECLINE":
            return false
        default:
            let draw = SplitMix64.mix(seed, 0x2EF, UInt64(review.plan), UInt64(review.charge))
            return Int(draw % UInt64(neutralShare.of)) < neutralShare.refunded
        }
    }

    /// The void of a refunded review's order: full, a chargeback Google made, at the review's end.
    static func void(_ review: PendingRefundReview) -> RefundRecord {
        RefundRecord(
            plan: Int32(review.plan), charge: UInt16(review.charge), kind: .full, reason: 7, source: 2,
            eventMillis: review.endMillis, recordedMillis: review.endMillis)
    }

    /// The reviews of app `app` (its id) that ended refunded by `now`, by their end.
    func refunded(app: String, now: Int64) -> [PendingRefundReview] {
        let seed = state.scenario.spec.seed
        return (state.pubsub.reviewsByApp[app] ?? []).prefix { $0.endMillis <= now }.filter {
            Self.refunds($0, answer: state.reviews.first(app: app, orderId: $0.orderId), seed: seed)
        }
    }

    /// The void a review made of order `orderId` by `now`, if any.
    func void(orderId: String, now: Int64) -> RefundRecord? {
        guard let review = state.pubsub.reviews[orderId], review.endMillis <= now,
            Self.refunds(
                review, answer: state.reviews.first(app: review.app, orderId: orderId), seed: state.scenario.spec.seed)
        else { return nil }
        return Self.void(review)
    }

    /// Publishes the `voidedPurchaseNotification` of every review of the subscription's app refunded by `now`.
    func publish(subscription: String, now: Int64) {
        let scenario = state.scenario
        guard
            let app = scenario.spec.apps.first(where: {
                $0.platform == .google && PubSubSubscriptions.name(app: $0.id) == subscription
            })
        else { return }
        let messages = refunded(app: app.id, now: now).map { review in
            let body =
                #""voidedPurchaseNotification":{"purchaseToken":"\#(scenario.purchaseToken(plan: review.plan))","#
                + #""orderId":"\#(review.orderId)","productType":\#(scenario.plans[review.plan].isOneTime ? 2 : 1),"#
                + #""refundType":1}"#
            let json =
                #"{"version":"1.0","packageName":"\#(app.storeId)","eventTimeMillis":"\#(review.endMillis)",\#(body)}"#
            let id = SplitMix64.mix(scenario.spec.seed, 0x2F0, UInt64(review.plan), UInt64(review.charge))
            return SimulatedRTDNMessage(
                messageId: String(id % 10_000_000_000_000), publishMillis: review.endMillis, json: json)
        }
        guard !messages.isEmpty else { return }
        state.pubsub.publishOnce(subscription, messages)
    }

    /// The ground truth's Google voids with the reviews' voids by `now` added, each app's in recorded order.
    func truth(_ voids: [GroundTruth.GoogleVoid], now: Int64) -> [GroundTruth.GoogleVoid] {
        let apps = state.scenario.spec.apps
        var added = voids
        for app in apps where app.platform == .google {
            for review in refunded(app: app.id, now: now) {
                added.append(state.scenario.googleVoid(Self.void(review), app: app, now: now, odd: nil))
            }
        }
        guard added.count > voids.count else { return voids }
        let place = Dictionary(apps.enumerated().map { ($1.id, $0) }) { first, _ in first }
        return added.enumerated().sorted {
            (place[$0.element.app] ?? 0, $0.element.recordedTimeMillis, $0.offset)
                < (place[$1.element.app] ?? 0, $1.element.recordedTimeMillis, $1.offset)
        }.map(\.element)
    }
}
