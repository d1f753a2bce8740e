/// An Apple subscription as Get All Subscription Statuses and the renewal info see it at one instant.
struct AppleSubscriptionState: Sendable, Equatable {
    /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    var status: Int
    /// The latest charge that has happened (its transaction is `signedTransactionInfo`).
    var charge: Int
    /// 1 on, 0 off.
    var autoRenewStatus: Int
    /// Product of the next renewal (differs from the current one when a downgrade is scheduled).
    var autoRenewProduct: UInt16
    /// 1 cancelled, 2 billing error; nil while active.
    var expirationIntent: Int?
    /// True during grace and billing retry.
    var inBillingRetry: Bool
    /// End of the grace period while in it.
    var gracePeriodExpiresMillis: Int64?
    /// When the next renewal is due (the current period's end), while it may still renew.
    var renewalMillis: Int64?
    /// Whether the purchase is entitled (1 and 4).
    var entitled: Bool { status == 1 || status == 4 }
}

extension Scenario {
    /// The state of an Apple purchase at `millis`, or nil before its first charge.
    func appleState(plan index: Int, at millis: Int64) -> AppleSubscriptionState? {
        let plan = plans[index]
        let periods = periods(plan)
        guard let charge = plan.currentCharge(at: millis, periods: periods) else { return nil }
        let expires = plan.expiresMillis(charge, periods: periods)
        var state = AppleSubscriptionState(
            status: 1, charge: charge, autoRenewStatus: 1, autoRenewProduct: plan.chargeProduct(charge),
            expirationIntent: nil, inBillingRetry: false, gracePeriodExpiresMillis: nil, renewalMillis: expires)
        if plan.isOneTime {
            state.renewalMillis = nil
            state.autoRenewStatus = 0
            if activeRevocation(ofPlan: index, at: millis) != nil { state.status = 5 }
            return state
        }
        if plan.cancelMillis != 0, millis >= plan.cancelMillis { state.autoRenewStatus = 0 }
        if plan.transition == .downgrade, charge < Int(plan.firstCount),
            millis >= plan.downgradeDecisionMillis(periods: periods)
        {
            state.autoRenewProduct = plan.secondProduct
        }
        if activeRevocation(ofPlan: index, at: millis) != nil {
            state.status = 5
            state.autoRenewStatus = 0
            state.renewalMillis = nil
            return state
        }
        if millis < expires { return state }
        // Past the paid period: between segments or after the last charge.
        let day: Int64 = 86_400_000
        let graceEnd = expires + Int64(plan.graceDays) * day
        let holdEnd = graceEnd + Int64(plan.holdDays) * day
        let inGap = charge < plan.chargeCount - 1
        switch (inGap, plan.ending) {
        case (true, _) where plan.transition == .recovery, (false, .billingExpired):
            state.expirationIntent = 2
            if millis < graceEnd {
                state.status = 4
                state.inBillingRetry = true
                state.gracePeriodExpiresMillis = graceEnd
            } else if millis < holdEnd || inGap {
                state.status = 3
                state.inBillingRetry = true
            } else {
                state.status = 2
                state.autoRenewStatus = 0
                state.renewalMillis = nil
            }
        case (false, .voluntary), (false, .replaced), (false, .revoked):
            state.status = 2
            state.expirationIntent = 1
            state.autoRenewStatus = 0
            state.renewalMillis = nil
        default:
            break
        }
        return state
    }
}
