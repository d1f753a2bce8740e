/// A generated (or loaded) scenario: apps, products, every purchase's plan, every refund, and Apple's
/// notification history, with the indexes that the endpoints search. Immutable once built; what a client sees
/// depends only on it and the simulator clock.
final class Scenario: Sendable {
    let spec: ScenarioSpec
    let plans: [PurchasePlan]
    let refunds: [RefundRecord]
    /// Refund indices sorted by (plan, eventMillis).
    let refundsByPlan: [Int32]
    /// Per app index: refund indices of that Google app sorted by (recordedMillis, index): the voided list order.
    let voidedOrder: [[Int32]]
    /// Per app index and environment (`2 * app + (sandbox ? 1 : 0)`): notifications sorted by time.
    let notifications: [[NotificationEvent]]
    /// Period length in ms per product index.
    let periodMillis: [Int64]
    /// Salt for derived identifiers (tokens, order ids).
    let idSalt: UInt64

    init(
        spec: ScenarioSpec, plans: [PurchasePlan], refunds: [RefundRecord], refundsByPlan: [Int32],
        voidedOrder: [[Int32]], notifications: [[NotificationEvent]]
    ) {
        self.spec = spec
        self.plans = plans
        self.refunds = refunds
        self.refundsByPlan = refundsByPlan
        self.voidedOrder = voidedOrder
        self.notifications = notifications
        self.periodMillis = spec.products.map(\.periodMillis)
        self.idSalt = SplitMix64.mix(spec.seed, 0x1D5)
    }

    /// The two segment periods of a plan.
    func periods(_ plan: PurchasePlan) -> (Int64, Int64) {
        (periodMillis[Int(plan.product)], periodMillis[Int(plan.secondProduct)])
    }

    /// The product of a plan's charge.
    func product(_ plan: PurchasePlan, charge: Int) -> SimulatedProduct {
        spec.products[Int(plan.chargeProduct(charge))]
    }

    /// The refunds of one purchase, oldest first.
    func refunds(ofPlan index: Int) -> ArraySlice<Int32> {
        let target = Int32(index)
        var low = 0
        var high = refundsByPlan.count
        while low < high {
            let mid = (low + high) / 2
            if refunds[Int(refundsByPlan[mid])].plan < target { low = mid + 1 } else { high = mid }
        }
        var end = low
        while end < refundsByPlan.count, refunds[Int(refundsByPlan[end])].plan == target { end += 1 }
        return refundsByPlan[low..<end]
    }

    /// The refund that has revoked the purchase at `millis` and is not reversed by then, if any. Only a refund of
    /// the charge that is current at `millis` takes access away; a refund of an older renewal does not.
    func activeRevocation(ofPlan index: Int, at millis: Int64) -> RefundRecord? {
        let plan = plans[index]
        guard let current = plan.currentCharge(at: millis, periods: periods(plan)) else { return nil }
        for refundIndex in refunds(ofPlan: index) {
            let refund = refunds[Int(refundIndex)]
            if refund.revokes, Int(refund.charge) == current, refund.eventMillis <= millis,
                millis < refund.reversedMillis
            {
                return refund
            }
        }
        return nil
    }

    /// The index of an app's notification list for an environment.
    static func notificationSlot(app: Int, sandbox: Bool) -> Int {
        2 * app + (sandbox ? 1 : 0)
    }
}
