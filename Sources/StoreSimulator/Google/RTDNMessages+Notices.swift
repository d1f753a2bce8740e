import Foundation

extension Scenario {
    /// The app's `spec.rtdnNotices` newest voids as `voidedPurchaseNotification`s (published when each void was
    /// recorded, up to the anchor; `refundType` 2 for a quantity-based part, else 1), and as many of its subscriptions,
    /// picked by the seed, as `subscriptionNotification`s an hour before the anchor (`notificationType` 2, renewed).
    func rtdnNotices(app: Int, salt: UInt64, envelope: (Int64, String) -> String) -> [SimulatedRTDNMessage] {
        guard spec.rtdnNotices > 0 else { return [] }
        var messages: [SimulatedRTDNMessage] = []
        let voids = voidedOrder[app].lazy.map { self.refunds[Int($0)] }.filter {
            $0.recordedMillis <= self.spec.anchorMillis
        }
        for refund in voids.suffix(spec.rtdnNotices) {
            let plan = Int(refund.plan)
            let body =
                #""voidedPurchaseNotification":{"purchaseToken":"\#(purchaseToken(plan: plan))","#
                + #""orderId":"\#(orderId(plan: plan, charge: Int(refund.charge)))","#
                + #""productType":\#(plans[plan].isOneTime ? 2 : 1),"#
                + #""refundType":\#(refund.kind == .partialQuantity ? 2 : 1)}"#
            messages.append(
                SimulatedRTDNMessage(
                    messageId: String(
                        SplitMix64.mix(salt, UInt64(plan), UInt64(refund.charge), 5) % 10_000_000_000_000),
                    publishMillis: refund.recordedMillis, json: envelope(refund.recordedMillis, body)))
        }
        let subscriptions = plans.indices.filter { Int(plans[$0].app) == app && !plans[$0].isOneTime }
            .sorted { SplitMix64.mix(salt, UInt64($0), 6) < SplitMix64.mix(salt, UInt64($1), 6) }
        let millis = spec.anchorMillis - 3_600_000
        for plan in subscriptions.prefix(spec.rtdnNotices) {
            let product = self.product(plans[plan], charge: 0).productId
            let body =
                #""subscriptionNotification":{"version":"1.0","notificationType":2,"#
                + #""purchaseToken":"\#(purchaseToken(plan: plan))","subscriptionId":"\#(product)"}"#
            messages.append(
                SimulatedRTDNMessage(
                    messageId: String(SplitMix64.mix(salt, UInt64(plan), 7) % 10_000_000_000_000),
                    publishMillis: millis, json: envelope(millis, body)))
        }
        return messages
    }
}
