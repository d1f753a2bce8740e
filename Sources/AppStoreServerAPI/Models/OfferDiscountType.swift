/// The payment mode of a subscription offer. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/offerdiscounttype)
public struct OfferDiscountType: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `FREE_TRIAL`.
    public static let freeTrial = OfferDiscountType(rawValue: "FREE_TRIAL")
    /// `PAY_AS_YOU_GO`.
    public static let payAsYouGo = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")
    /// `PAY_UP_FRONT`.
    public static let payUpFront = OfferDiscountType(rawValue: "PAY_UP_FRONT")
    /// `ONE_TIME`.
    public static let oneTime = OfferDiscountType(rawValue: "ONE_TIME")
}
