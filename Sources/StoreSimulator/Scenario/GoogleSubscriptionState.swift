/// A Google subscription as `subscriptionsv2.get` sees it at one instant.
struct GoogleSubscriptionState: Sendable, Equatable {
    /// Why a subscription was cancelled or ended.
    enum Cancellation: Sendable, Equatable {
        case user(cancelMillis: Int64)
        case system
        case replacement
        case developer
    }

    /// `subscriptionState` without its `SUBSCRIPTION_STATE_` prefix: ACTIVE, CANCELED, IN_GRACE_PERIOD, ON_HOLD,
    /// PAUSED, EXPIRED, PENDING, PENDING_PURCHASE_CANCELED.
    var state: String
    /// The latest charge that has happened, nil while pending.
    var charge: Int?
    /// The line item's product index.
    var product: UInt16
    /// `lineItems[0].expiryTime` (ms), nil while pending.
    var expiryMillis: Int64?
    var autoRenewEnabled: Bool
    var cancellation: Cancellation?
    /// PAUSED: when it resumes.
    var autoResumeMillis: Int64?
    /// Whether the purchase is entitled: ACTIVE, CANCELED (until expiry) and IN_GRACE_PERIOD.
    var entitled: Bool { ["ACTIVE", "CANCELED", "IN_GRACE_PERIOD"].contains(state) }
}

extension Scenario {
    /// The state of a Google subscription at `millis`, or nil before it exists.
    func googleState(plan index: Int, at millis: Int64) -> GoogleSubscriptionState? {
        let plan = plans[index]
        guard plan.exists(at: millis) else { return nil }
        let periods = periods(plan)
        guard let charge = plan.currentCharge(at: millis, periods: periods) else {
            let canceled = plan.endMillis != 0 && millis >= plan.endMillis
            return GoogleSubscriptionState(
                state: canceled ? "PENDING_PURCHASE_CANCELED" : "PENDING", charge: nil, product: plan.product,
                expiryMillis: nil, autoRenewEnabled: !canceled,
                cancellation: canceled ? .user(cancelMillis: plan.endMillis) : nil,
                autoResumeMillis: nil)
        }
        let expires = plan.expiresMillis(charge, periods: periods)
        var state = GoogleSubscriptionState(
            state: "ACTIVE", charge: charge, product: plan.chargeProduct(charge), expiryMillis: expires,
            autoRenewEnabled: true, cancellation: nil, autoResumeMillis: nil)
        let userCancelled = plan.cancelMillis != 0 && millis >= plan.cancelMillis
        if let revocation = activeRevocation(ofPlan: index, at: millis) {
            state.state = "EXPIRED"
            state.autoRenewEnabled = false
            state.expiryMillis = revocation.eventMillis
            state.cancellation = revocation.source == 1 ? .developer : .system
            return state
        }
        if plan.ending == .replaced, millis >= plan.endMillis {
            state.state = "EXPIRED"
            state.autoRenewEnabled = false
            state.expiryMillis = min(expires, plan.endMillis)
            state.cancellation = .replacement
            return state
        }
        if millis < expires {
            if userCancelled {
                state.state = "CANCELED"
                state.autoRenewEnabled = false
                state.cancellation = .user(cancelMillis: plan.cancelMillis)
            }
            return state
        }
        lapse(&state, plan: plan, charge: charge, expires: expires, at: millis)
        return state
    }

    /// A charge past its expiry at `millis`: paused, in grace, on hold, or expired, by how the plan ends.
    private func lapse(
        _ state: inout GoogleSubscriptionState, plan: PurchasePlan, charge: Int, expires: Int64, at millis: Int64
    ) {
        let day: Int64 = 86_400_000
        let graceEnd = expires + Int64(plan.graceDays) * day
        let holdEnd = graceEnd + Int64(plan.holdDays) * day
        let inGap = charge < plan.chargeCount - 1
        switch (inGap, plan.ending) {
        case (true, _) where plan.transition == .resume:
            state.state = "PAUSED"
            state.autoResumeMillis = plan.switchMillis
        case (true, _), (false, .billingExpired):
            if millis < graceEnd {
                state.state = "IN_GRACE_PERIOD"
                state.expiryMillis = graceEnd
            } else if millis < holdEnd || inGap {
                state.state = "ON_HOLD"
            } else {
                state.state = "EXPIRED"
                state.autoRenewEnabled = false
                state.cancellation = .system
            }
        case (false, .voluntary), (false, .replaced):
            state.state = "EXPIRED"
            state.autoRenewEnabled = false
            state.cancellation = .user(cancelMillis: plan.cancelMillis == 0 ? expires : plan.cancelMillis)
        case (false, .revoked):
            state.state = "EXPIRED"
            state.autoRenewEnabled = false
            state.cancellation = .system
        default:
            break
        }
    }
}
