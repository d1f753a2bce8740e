/// The status of an auto-renewable subscription (Apple's `status` type). Entitled: active and billing grace period.
/// Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/status)
public struct SubscriptionStatus: StoreIntValue {
    /// The value as Apple sends it.
    public var rawValue: Int

    /// Wraps any value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 1: Active.
    public static let active = SubscriptionStatus(rawValue: 1)
    /// 2: Expired.
    public static let expired = SubscriptionStatus(rawValue: 2)
    /// 3: In the billing retry period.
    public static let billingRetry = SubscriptionStatus(rawValue: 3)
    /// 4: In the billing grace period.
    public static let billingGracePeriod = SubscriptionStatus(rawValue: 4)
    /// 5: Revoked (refunded or Family Sharing revoked).
    public static let revoked = SubscriptionStatus(rawValue: 5)
}
