/// The classification of a recorded status change (`subscription_transition.classification`).
public enum TransitionKind: String, Sendable, Hashable, CaseIterable {
    /// A new transaction or order, and the expiry moved.
    case renewal
    /// Active (or canceled) to expired with auto-renew off: the customer let it end.
    case lapse
    /// A renewal failed; access continues through the grace period.
    case grace
    /// Apple: the grace period ran out (or there was none): billing retry, no access.
    case billingRetry = "billing_retry"
    /// Google: on hold after a failed renewal, no access.
    case onHold = "on_hold"
    /// Google: paused by the customer.
    case paused
    /// Google: a paused subscription resumed.
    case resumed
    /// A charge succeeded after grace, billing retry or on hold.
    case recovered
    /// Refunded or revoked.
    case revoked
    /// A higher tier took effect (Apple at once; Google through a new token).
    case upgrade
    /// A lower tier took effect (at the renewal).
    case downgrade
    /// Apple: the next renewal will be on a lower tier (`autoRenewProductId`).
    case downgradeScheduled = "downgrade_scheduled"
    /// Google: a newer token replaced this one (`linkedPurchaseToken`).
    case replaced
    /// Ended after billing trouble, a pause or a pending payment.
    case expired
    /// Auto-renew turned off before the expiry (Google CANCELED; Apple auto-renew status 0).
    case canceled
    /// The store no longer knows the subscription.
    case missing
    /// The first answer for a subscription never checked before.
    case firstSeen = "first_seen"
    /// Something else changed (auto-renew back on, a crossgrade, an environment, ...).
    case changed
}
