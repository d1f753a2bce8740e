/// The subtype of an App Store Server Notification V2. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/subtype)
public struct Subtype: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `INITIAL_BUY`.
    public static let initialBuy = Subtype(rawValue: "INITIAL_BUY")
    /// `RESUBSCRIBE`.
    public static let resubscribe = Subtype(rawValue: "RESUBSCRIBE")
    /// `DOWNGRADE`.
    public static let downgrade = Subtype(rawValue: "DOWNGRADE")
    /// `UPGRADE`.
    public static let upgrade = Subtype(rawValue: "UPGRADE")
    /// `AUTO_RENEW_ENABLED`.
    public static let autoRenewEnabled = Subtype(rawValue: "AUTO_RENEW_ENABLED")
    /// `AUTO_RENEW_DISABLED`.
    public static let autoRenewDisabled = Subtype(rawValue: "AUTO_RENEW_DISABLED")
    /// `VOLUNTARY`.
    public static let voluntary = Subtype(rawValue: "VOLUNTARY")
    /// `BILLING_RETRY`.
    public static let billingRetry = Subtype(rawValue: "BILLING_RETRY")
    /// `PRICE_INCREASE`.
    public static let priceIncrease = Subtype(rawValue: "PRICE_INCREASE")
    /// `GRACE_PERIOD`.
    public static let gracePeriod = Subtype(rawValue: "GRACE_PERIOD")
    /// `PENDING`.
    public static let pending = Subtype(rawValue: "PENDING")
    /// `ACCEPTED`.
    public static let accepted = Subtype(rawValue: "ACCEPTED")
    /// `BILLING_RECOVERY`.
    public static let billingRecovery = Subtype(rawValue: "BILLING_RECOVERY")
    /// `PRODUCT_NOT_FOR_SALE`.
    public static let productNotForSale = Subtype(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// `SUMMARY`.
    public static let summary = Subtype(rawValue: "SUMMARY")
    /// `FAILURE`.
    public static let failure = Subtype(rawValue: "FAILURE")
    /// `UNREPORTED`.
    public static let unreported = Subtype(rawValue: "UNREPORTED")
}
