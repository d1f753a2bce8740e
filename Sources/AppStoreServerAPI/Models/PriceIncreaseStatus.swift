/// Whether the customer consented to a price increase. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/priceincreasestatus)
public struct PriceIncreaseStatus: StoreIntValue {
    /// The value as Apple sends it.
    public var rawValue: Int

    /// Wraps any value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 0: The customer has not responded.
    public static let customerHasNotResponded = PriceIncreaseStatus(rawValue: 0)
    /// 1: The customer consented, or was notified without needing to consent.
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent = PriceIncreaseStatus(rawValue: 1)
}
