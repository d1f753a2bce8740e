import Foundation

/// One message of a Google app's RTDN topic: a base64 `DeveloperNotification`.
struct SimulatedRTDNMessage: Sendable {
    var messageId: String
    var publishMillis: Int64
    /// The `DeveloperNotification` JSON.
    var json: String
    /// For a pending refund review: the review it asks for.
    var review: PendingRefundReview?

    /// The order of a pending refund review.
    var orderId: String? { review?.orderId }
}

/// A chargeback Google asks the developer to review: the order, the token that answers it, and the purchase and
/// charge behind the order. Google takes an answer for 24 hours from the notification and then decides.
struct PendingRefundReview: Sendable, Equatable {
    /// The app's id.
    var app: String
    var orderId: String
    var token: String
    /// The purchase (index into the scenario's plans) and its charge.
    var plan: Int
    var charge: Int
    /// The notification's `eventTimeMillis`.
    var notifiedMillis: Int64

    /// How long Google takes answers before it decides.
    static let windowMillis: Int64 = 86_400_000

    /// When Google decides the review.
    var endMillis: Int64 { notifiedMillis + Self.windowMillis }
}

extension Scenario {
    /// The RTDN messages of Google app `app`: a test notification an hour before the anchor, and its share of
    /// `spec.refundReviews` pending refund reviews on orders picked by the seed (orders the scenario never refunds),
    /// oldest first.
    func rtdnMessages(app: Int) -> [SimulatedRTDNMessage] {
        let packageName = spec.apps[app].storeId
        let googleApps = spec.apps.indices.filter { spec.apps[$0].platform == .google }
        guard let position = googleApps.firstIndex(of: app) else { return [] }
        let share = spec.refundReviews / googleApps.count + (position < spec.refundReviews % googleApps.count ? 1 : 0)
        let salt = SplitMix64.mix(spec.seed, 0xC4A8, UInt64(app))
        let candidates = plans.indices.filter { Int(plans[$0].app) == app }
            .sorted { SplitMix64.mix(salt, UInt64($0)) < SplitMix64.mix(salt, UInt64($1)) }
        func envelope(_ millis: Int64, _ body: String) -> String {
            #"{"version":"1.0","packageName":"\#(packageName)","eventTimeMillis":"\#(millis)",\#(body)}"#
        }
        var messages = [
            SimulatedRTDNMessage(
                messageId: String(SplitMix64.mix(salt, 1) % 10_000_000_000_000),
                publishMillis: spec.anchorMillis - 3_600_000,
                json: envelope(spec.anchorMillis - 3_600_000, #""testNotification":{"version":"1.0"}"#))
        ]
        var made = 0
        for index in candidates where made < share {
            let plan = plans[index]
            let hoursBefore: Int64 = made % 10 == 9 ? 25 : Int64(made % 20) + 1
            let millis = spec.anchorMillis - hoursBefore * 3_600_000 + Int64(made)
            let charges = plan.isOneTime ? 1 : max(1, plan.visibleCharges(at: millis, periods: periods(plan)))
            // A chargeback under review is on an order made by then and not refunded otherwise: its outcome is the
            // review's.
            let orderId = self.orderId(plan: index, charge: charges - 1)
            guard googleOrder(orderId) != nil, plan.chargeMillis(charges - 1, periods: periods(plan)) < millis,
                orderRefunds(plan: index, charge: charges - 1, at: .max).isEmpty,
                refundWithoutRevocation(plan: index, charge: charges - 1) == nil
            else { continue }
            made += 1
            let token = "prt-" + String(SplitMix64.mix(salt, UInt64(index), 2), radix: 36)
            let review =
                #""pendingRefundReviewNotification":{"orderId":"\#(orderId)","pendingRefundToken":"\#(token)","#
                + #""refundReason":"CHARGEBACK","obfuscatedExternalAccountId":"acct-\#(index)"}"#
            messages.append(
                SimulatedRTDNMessage(
                    messageId: String(SplitMix64.mix(salt, UInt64(index), 3) % 10_000_000_000_000),
                    publishMillis: millis + 500, json: envelope(millis, review),
                    review: PendingRefundReview(
                        app: spec.apps[app].id, orderId: orderId, token: token, plan: index, charge: charges - 1,
                        notifiedMillis: millis)))
        }
        messages += rtdnNotices(app: app, salt: salt, envelope: envelope)
        return messages.sorted { $0.publishMillis < $1.publishMillis }
    }
}
