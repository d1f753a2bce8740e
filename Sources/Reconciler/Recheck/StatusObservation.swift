import Foundation

/// What one status call said about one subscription, normalised across the stores: the values the recheck job
/// stores in `subscription`.
public struct StatusObservation: Sendable, Equatable {
    /// The normalised state.
    public var state: LifecycleState
    /// The store's own value: Apple status `"1"`...`"5"`, Google `SUBSCRIPTION_STATE_...`.
    public var storeState: String
    /// Whether the customer has access now (the entitlement rule of each store).
    public var entitled: Bool
    /// End of the paid time, or of the grace period while in it.
    public var expiresAt: Date?
    /// Whether the subscription renews automatically.
    public var autoRenew: Bool?
    /// Apple: the product of the next renewal (differs from ``productId`` when a downgrade is scheduled).
    public var autoRenewProductId: String?
    /// The current product.
    public var productId: String?
    /// Apple: the latest transactionId; Google: `lineItems[].latestSuccessfulOrderId`.
    public var orderId: String?
    /// Apple: the environment that answered (`Production`, `Sandbox`).
    public var environment: String?
    /// Google: the token this purchase replaced.
    public var linkedStoreId: String?

    /// Creates an observation.
    public init(
        state: LifecycleState, storeState: String, entitled: Bool, expiresAt: Date?, autoRenew: Bool?,
        autoRenewProductId: String? = nil, productId: String?, orderId: String?, environment: String? = nil,
        linkedStoreId: String? = nil
    ) {
        self.state = state
        self.storeState = storeState
        self.entitled = entitled
        self.expiresAt = expiresAt
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.orderId = orderId
        self.environment = environment
        self.linkedStoreId = linkedStoreId
    }
}
