import Foundation
import PlayDeveloperAPI

/// Turns a `subscriptionsv2.get` answer into a ``StatusReading``. Pure: no I/O.
///
/// ACTIVE → active, CANCELED → canceled, IN_GRACE_PERIOD → grace, ON_HOLD → on_hold, PAUSED → paused, EXPIRED →
/// expired (replaced when Google says a replacement cancelled it), PENDING → pending, PENDING_PURCHASE_CANCELED →
/// expired. Entitled: ACTIVE, CANCELED before its expiry, IN_GRACE_PERIOD. `linkedPurchaseToken` names the token a
/// paid purchase replaced (not yet while PENDING, never once PENDING_PURCHASE_CANCELED).
/// [SubscriptionPurchaseV2](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2)
public enum GoogleStatusInterpreter {
    /// The `store_state` recorded for a subscription Google answers with 410 Gone.
    public static let goneStoreState = "GONE (HTTP 410)"

    /// `subscriptionsv2.get` answered 410 Gone: Google keeps a purchase about 60 days after it expired, then
    /// answers Gone. The subscription is over: expired, not entitled, not renewing. The stored expiry and product
    /// are kept (Google sends no body to say otherwise); recording it clears the recheck flag like any answer.
    public static func gone(_ subscription: StoredSubscription) -> StatusReading {
        .observed(
            StatusObservation(
                state: .expired, storeState: goneStoreState, entitled: false, expiresAt: subscription.expiresAt,
                autoRenew: false, productId: nil, orderId: nil))
    }

    /// Reads one subscription's state.
    /// - Parameters:
    ///   - purchase: the decoded answer.
    ///   - now: the time of the call (CANCELED entitles until its expiry).
    public static func read(_ purchase: SubscriptionPurchaseV2, now: Date) -> StatusReading {
        guard let raw = purchase.subscriptionState?.rawValue, !raw.isEmpty else {
            return .badAnswer("the answer has no subscriptionState")
        }
        let state: LifecycleState
        switch raw {
        case SubscriptionState.active.rawValue: state = .active
        case SubscriptionState.canceled.rawValue: state = .canceled
        case SubscriptionState.inGracePeriod.rawValue: state = .grace
        case SubscriptionState.onHold.rawValue: state = .onHold
        case SubscriptionState.paused.rawValue: state = .paused
        case SubscriptionState.expired.rawValue:
            state = purchase.canceledStateContext?.replaced == true ? .replaced : .expired
        case SubscriptionState.pending.rawValue: state = .pending
        case SubscriptionState.pendingPurchaseCanceled.rawValue: state = .expired
        default: return .unknownState(raw)
        }
        guard !purchase.lineItems.isEmpty else { return .badAnswer("the answer has no lineItems") }
        // Several items (add-ons) share the subscription's fate; the one that runs longest says when it ends.
        let item = purchase.lineItems.max {
            ($0.expiryTime?.date ?? .distantPast) < ($1.expiryTime?.date ?? .distantPast)
        }
        guard let item, let productId = item.productId, !productId.isEmpty else {
            return .badAnswer("the line item has no productId")
        }
        let expiresAt = item.expiryTime?.date
        if expiresAt == nil && state != .pending && raw != SubscriptionState.pendingPurchaseCanceled.rawValue {
            return .badAnswer("the line item has no expiryTime")
        }
        let entitled: Bool
        switch state {
        case .active, .grace: entitled = true
        case .canceled: entitled = expiresAt.map { $0 > now } ?? false
        default: entitled = false
        }
        let autoRenew = item.autoRenewingPlan.map { $0.autoRenewEnabled ?? false } ?? false
        // A purchase still waiting for its payment has replaced nothing yet, and one whose payment never came never
        // will (Google: "use linked_purchase_token to get the current state of that subscription"): the old token
        // keeps its own state until the new one is paid for.
        let replacesLinked = state != .pending && raw != SubscriptionState.pendingPurchaseCanceled.rawValue
        return .observed(
            StatusObservation(
                state: state, storeState: raw, entitled: entitled, expiresAt: expiresAt, autoRenew: autoRenew,
                productId: productId, orderId: item.latestSuccessfulOrderId,
                linkedStoreId: replacesLinked ? purchase.linkedPurchaseToken.flatMap { $0.isEmpty ? nil : $0 } : nil))
    }
}
