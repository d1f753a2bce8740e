/// What really happened in the scenario up to the simulator's now, for tests to compare storerecon's database
/// with. The admin API serves the same values as JSON (keys are the property names).
public struct GroundTruth: Sendable, Codable, Equatable {
    /// The instant the truth is for (ms).
    public var nowMillis: Int64
    /// Every Apple refund or revocation that has happened, oldest first.
    public var appleRefunds: [AppleRefund]
    /// Every Google void that has happened (recorded or not yet), in recorded order.
    public var googleVoids: [GoogleVoid]
    /// Google refunds made without revocation (absent from the voided list), by now.
    public var googleRefundsWithoutRevocation: [GoogleRefundWithoutRevocation] = []

    /// One Google order refunded without revocation: the whole order, at `refundMillis`.
    public struct GoogleRefundWithoutRevocation: Sendable, Codable, Equatable {
        public var app: String
        public var orderId: String
        public var purchaseToken: String
        public var refundMillis: Int64
        public var currency: String
        /// What was refunded (the order's total, tax included) and its tax, nanos.
        public var totalNanos: Int64
        public var taxNanos: Int64
        /// Whether the order is the subscription's latest (what `latestSuccessfulOrderId` names).
        public var isLatestOrder: Bool
    }

    /// One Apple refunded or revoked transaction.
    public struct AppleRefund: Sendable, Codable, Equatable {
        public var app: String
        /// `Production` or `Sandbox`.
        public var environment: String
        public var transactionId: String
        public var originalTransactionId: String
        public var productId: String
        public var purchaseDate: Int64
        public var revocationDate: Int64
        /// 0 other, 1 issue in the app.
        public var revocationReason: Int
        /// REFUND_FULL, REFUND_PRORATED or FAMILY_REVOKE.
        public var revocationType: String
        /// Milliunits (50000 = 50 %) for prorated refunds.
        public var revocationPercentage: Int?
        /// Store-reported price of the transaction in milliunits: the total for the quantity bought, as Apple signs it.
        public var priceMilli: Int64
        public var currency: String
        public var quantity: Int
        /// The scenario's price of one unit of the product, milliunits (a fact independent of what Apple signs).
        public var unitPriceMilli: Int64
        /// When a REFUND_REVERSED happened, if it has by now.
        public var reversedDate: Int64?
    }

    /// One Google voided order (or one part of a quantity-based partial refund).
    public struct GoogleVoid: Sendable, Codable, Equatable {
        public var app: String
        public var packageName: String
        public var orderId: String
        public var purchaseToken: String
        public var productId: String
        public var purchaseTimeMillis: Int64
        public var voidedTimeMillis: Int64
        /// When Google recorded it: what the list's window filters on.
        public var recordedTimeMillis: Int64
        /// Whether it is recorded by now (only then can the list return it).
        public var recorded: Bool
        public var voidedSource: Int
        public var voidedReason: Int
        /// Units refunded by a partial part (listed only with `includeQuantityBasedPartialRefund=true`).
        public var voidedQuantity: Int?
        /// True for subscription orders (listed only with `type=1`).
        public var isSubscription: Bool
        /// The buyer's region (ISO 3166-1 alpha-2) and the currency it pays in.
        public var buyerCountry: String
        public var currency: String
        /// The regional price of one unit, tax included, nanos (a scenario fact: see `Scenario.orderPrice`).
        public var unitPriceNanos: Int64
        /// The tax in one unit, nanos.
        public var unitTaxNanos: Int64
        /// Units the order bought.
        public var orderQuantity: Int
        /// A quantity-based part is processed (no longer PENDING) from this instant.
        public var processedMillis: Int64
        /// How the listing answers this row when odd data is on (``SimulatorOptions/oddRows``), or nil.
        public var odd: OddRow? = nil
    }
}

/// One subscription's true state at the simulator's now.
public struct SubscriptionTruth: Sendable, Codable, Equatable {
    public var app: String
    /// `apple` or `google`.
    public var platform: String
    /// Apple: `Production` or `Sandbox`.
    public var environment: String?
    /// Apple `originalTransactionId` or Google `purchaseToken`.
    public var storeId: String
    public var productId: String
    /// Apple: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var appleStatus: Int?
    /// Google: `SUBSCRIPTION_STATE_...`.
    public var googleState: String?
    /// Whether the customer has access now.
    public var entitled: Bool
    /// End of the paid (or grace) time, if any.
    public var expiresMillis: Int64?
    public var autoRenew: Bool
    /// Apple: the latest transaction id; Google: the latest successful order id.
    public var latestTransaction: String?
    /// Apple: the product of the next renewal (`autoRenewProductId`; differs from `productId` while a downgrade is
    /// scheduled); nil for Google.
    public var autoRenewProductId: String?
    /// Google: the token this purchase replaced.
    public var linkedPurchaseToken: String?
    /// Google: the token that replaced this one.
    public var replacedByToken: String?
}
