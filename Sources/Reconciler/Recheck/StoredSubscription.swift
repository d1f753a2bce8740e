import Foundation
import Postgres

/// A subscription as the database holds it before a recheck: the values a status answer is compared with.
public struct StoredSubscription: Sendable, Equatable {
    /// `subscription.id`.
    public var id: Int64
    /// Apple originalTransactionId / Google purchaseToken.
    public var storeId: String
    /// The stored product.
    public var productId: String
    /// The stored state.
    public var state: LifecycleState
    /// The store's raw state as last seen.
    public var storeState: String?
    /// Whether the customer has access.
    public var entitled: Bool
    /// The stored expiry.
    public var expiresAt: Date?
    /// Whether it renews automatically.
    public var autoRenew: Bool?
    /// Apple: the product of the next renewal.
    public var autoRenewProductId: String?
    /// The latest transaction or order.
    public var orderId: String?
    /// Google: the token this one replaced.
    public var linkedStoreId: String?
    /// Google: the token that replaced this one.
    public var replacedByStoreId: String?
    /// The first token of a replacement chain.
    public var chainRootStoreId: String?
    /// Apple: the environment that answered last.
    public var environment: String?
    /// Set by the refund jobs: check soon.
    public var flaggedAt: Date?

    /// Creates a stored subscription.
    public init(
        id: Int64, storeId: String, productId: String, state: LifecycleState, storeState: String? = nil,
        entitled: Bool = true, expiresAt: Date?, autoRenew: Bool? = nil, autoRenewProductId: String? = nil,
        orderId: String? = nil, linkedStoreId: String? = nil, replacedByStoreId: String? = nil,
        chainRootStoreId: String? = nil, environment: String? = nil, flaggedAt: Date? = nil
    ) {
        self.id = id
        self.storeId = storeId
        self.productId = productId
        self.state = state
        self.storeState = storeState
        self.entitled = entitled
        self.expiresAt = expiresAt
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
        self.orderId = orderId
        self.linkedStoreId = linkedStoreId
        self.replacedByStoreId = replacedByStoreId
        self.chainRootStoreId = chainRootStoreId
        self.environment = environment
        self.flaggedAt = flaggedAt
    }

    /// The columns ``init(row:)`` reads, for a `SELECT` or `RETURNING` list (prefix them with an alias as needed).
    static let columns = """
        id, store_id, product_id, state, store_state, entitled, expires_at, auto_renew, auto_renew_product_id,
        current_order_id, linked_store_id, replaced_by_store_id, chain_root_store_id, environment, flagged_at
        """

    /// Decodes a row selected with ``columns``. A state this version does not know reads as `unknown`.
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), storeId: try row.decode("store_id"), productId: try row.decode("product_id"),
            state: LifecycleState(rawValue: try row.decode("state")) ?? .unknown,
            storeState: try row.decodeIfPresent("store_state"), entitled: try row.decode("entitled"),
            expiresAt: try row.decodeIfPresent("expires_at"), autoRenew: try row.decodeIfPresent("auto_renew"),
            autoRenewProductId: try row.decodeIfPresent("auto_renew_product_id"),
            orderId: try row.decodeIfPresent("current_order_id"),
            linkedStoreId: try row.decodeIfPresent("linked_store_id"),
            replacedByStoreId: try row.decodeIfPresent("replaced_by_store_id"),
            chainRootStoreId: try row.decodeIfPresent("chain_root_store_id"),
            environment: try row.decodeIfPresent("environment"), flaggedAt: try row.decodeIfPresent("flagged_at"))
    }
}
