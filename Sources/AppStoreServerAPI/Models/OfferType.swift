/// The type of a subscription offer. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/offertype)
public struct OfferType: StoreIntValue {
    /// The value as Apple sends it.
    public var rawValue: Int

    /// Wraps any value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 1: An introductory offer.
    public static let introductoryOffer = OfferType(rawValue: 1)
    /// 2: A promotional offer.
    public static let promotionalOffer = OfferType(rawValue: 2)
    /// 3: An offer with a subscription offer code.
    public static let subscriptionOfferCode = OfferType(rawValue: 3)
    /// 4: A win-back offer.
    public static let winBackOffer = OfferType(rawValue: 4)
}
