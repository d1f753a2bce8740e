/// Why a subscription expired. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/expirationintent)
public struct ExpirationIntent: StoreIntValue {
    /// The value as Apple sends it.
    public var rawValue: Int

    /// Wraps any value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 1: The customer cancelled.
    public static let customerCancelled = ExpirationIntent(rawValue: 1)
    /// 2: A billing error.
    public static let billingError = ExpirationIntent(rawValue: 2)
    /// 3: The customer declined a price increase.
    public static let customerDidNotConsentToPriceIncrease = ExpirationIntent(rawValue: 3)
    /// 4: The product was not available at renewal.
    public static let productNotAvailable = ExpirationIntent(rawValue: 4)
    /// 5: Another reason.
    public static let other = ExpirationIntent(rawValue: 5)
}
