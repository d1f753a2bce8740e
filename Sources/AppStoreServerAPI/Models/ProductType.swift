/// The type of in-app purchase (the transaction's `type` field). Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/type)
public struct ProductType: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `Auto-Renewable Subscription`.
    public static let autoRenewableSubscription = ProductType(rawValue: "Auto-Renewable Subscription")
    /// `Non-Consumable`.
    public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
    /// `Consumable`.
    public static let consumable = ProductType(rawValue: "Consumable")
    /// `Non-Renewing Subscription`.
    public static let nonRenewingSubscription = ProductType(rawValue: "Non-Renewing Subscription")
}
