/// One item of a subscription purchase (`lineItems[]` of ``SubscriptionPurchaseV2``).
///
/// See [SubscriptionPurchaseLineItem](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#SubscriptionPurchaseLineItem).
public struct SubscriptionPurchaseLineItem: Sendable, Equatable, Codable {
    /// `autoRenewingPlan`: the item renews automatically.
    ///
    /// See [AutoRenewingPlan](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#AutoRenewingPlan).
    public struct AutoRenewingPlan: Sendable, Equatable, Codable {
        /// Whether the item will renew (false once the user canceled).
        public var autoRenewEnabled: Bool?
        /// The current recurring price, before discounts and taxes.
        public var recurringPrice: Money?

        /// Creates a plan.
        public init(autoRenewEnabled: Bool?, recurringPrice: Money? = nil) {
            self.autoRenewEnabled = autoRenewEnabled
            self.recurringPrice = recurringPrice
        }
    }

    /// `prepaidPlan`: the item is prepaid and does not renew.
    ///
    /// See [PrepaidPlan](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#PrepaidPlan).
    public struct PrepaidPlan: Sendable, Equatable, Codable {
        /// After this time top-ups are allowed; absent for expired plans.
        public var allowExtendAfterTime: RFC3339Timestamp?

        /// Creates a plan.
        public init(allowExtendAfterTime: RFC3339Timestamp? = nil) {
            self.allowExtendAfterTime = allowExtendAfterTime
        }
    }

    /// `offerDetails`: the base plan and offer the item was bought with.
    ///
    /// See [OfferDetails](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#OfferDetails).
    public struct OfferDetails: Sendable, Equatable, Codable {
        /// The base plan id.
        public var basePlanId: String?
        /// The offer id, for discounted offers.
        public var offerId: String?
        /// The offer's tags, including those inherited from the base plan.
        public var offerTags: [String]?

        /// Creates offer details.
        public init(basePlanId: String?, offerId: String? = nil, offerTags: [String]? = nil) {
            self.basePlanId = basePlanId
            self.offerId = offerId
            self.offerTags = offerTags
        }
    }

    /// A price: `Money` in the discovery document.
    ///
    /// See [Money](https://developers.google.com/android-publisher/api-ref/rest/v3/Money).
    public struct Money: Sendable, Equatable, Codable {
        /// ISO 4217 currency code.
        public var currencyCode: String?
        /// Whole units (int64, sent as a string).
        public var units: Int64?
        /// Nano units, -999,999,999 ... 999,999,999.
        public var nanos: Int32?

        /// Creates an amount.
        public init(currencyCode: String?, units: Int64?, nanos: Int32? = nil) {
            self.currencyCode = currencyCode
            self.units = units
            self.nanos = nanos
        }

        enum CodingKeys: String, CodingKey { case currencyCode, units, nanos }

        /// Decodes `units` as a string or a number.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            currencyCode = try container.decodeIfPresent(String.self, forKey: .currencyCode)
            units = try container.decodeFlexibleInt64IfPresent(forKey: .units)
            nanos = try container.decodeFlexibleInt32IfPresent(forKey: .nanos)
        }

        /// Encodes Google's shape (`units` as a string).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(currencyCode, forKey: .currencyCode)
            try container.encodeIfPresent(units.map(String.init), forKey: .units)
            try container.encodeIfPresent(nanos, forKey: .nanos)
        }
    }

    /// The product id, e.g. `monthly001`.
    public var productId: String?
    /// When the item expired or will expire unless renewed.
    public var expiryTime: RFC3339Timestamp?
    /// Present when the item renews automatically.
    public var autoRenewingPlan: AutoRenewingPlan?
    /// Present when the item is prepaid.
    public var prepaidPlan: PrepaidPlan?
    /// The base plan and offer.
    public var offerDetails: OfferDetails?
    /// The latest successful order of this item (`GPA.xxxx..N`); absent while the item is not owned yet.
    public var latestSuccessfulOrderId: String?

    /// Creates a line item.
    public init(
        productId: String?, expiryTime: RFC3339Timestamp?, autoRenewingPlan: AutoRenewingPlan? = nil,
        prepaidPlan: PrepaidPlan? = nil, offerDetails: OfferDetails? = nil, latestSuccessfulOrderId: String? = nil
    ) {
        self.productId = productId
        self.expiryTime = expiryTime
        self.autoRenewingPlan = autoRenewingPlan
        self.prepaidPlan = prepaidPlan
        self.offerDetails = offerDetails
        self.latestSuccessfulOrderId = latestSuccessfulOrderId
    }
}
