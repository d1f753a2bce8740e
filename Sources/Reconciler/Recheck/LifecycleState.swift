/// A subscription's normalised state (`subscription.state`), the same words for both stores.
public enum LifecycleState: String, Sendable, Hashable, CaseIterable {
    /// Never checked (imported or inserted by the app backend).
    case unknown
    /// Paid and renewing (Apple 1, Google ACTIVE).
    case active
    /// Google CANCELED: auto-renew off, entitled until expiry.
    case canceled
    /// In the billing grace period: a renewal failed, access continues (Apple 4, Google IN_GRACE_PERIOD).
    case grace
    /// Apple billing retry (3): a renewal failed, no access.
    case billingRetry = "billing_retry"
    /// Google ON_HOLD: a renewal failed, no access.
    case onHold = "on_hold"
    /// Google PAUSED.
    case paused
    /// Ended (Apple 2, Google EXPIRED and PENDING_PURCHASE_CANCELED).
    case expired
    /// Refunded or revoked (Apple 5; Google voids of the current order).
    case revoked
    /// Google PENDING: awaiting the first payment.
    case pending
    /// Google: a newer purchase token replaced this one (`linkedPurchaseToken`); it stopped granting at once.
    case replaced
    /// The store no longer knows the subscription (Google 404, Apple 4040010 in every environment asked).
    case missing

    /// States that can change at any moment, so the job watches them whatever the expiry.
    public static let watched: Set<LifecycleState> = [.grace, .billingRetry, .onHold, .paused, .pending]

    /// States of a failed renewal that a successful charge ends.
    public static let billingTrouble: Set<LifecycleState> = [.grace, .billingRetry, .onHold]
}
