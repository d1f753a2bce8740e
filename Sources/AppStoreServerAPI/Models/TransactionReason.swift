/// Whether a transaction is a customer's purchase or an automatic renewal. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/transactionreason)
public struct TransactionReason: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `PURCHASE`.
    public static let purchase = TransactionReason(rawValue: "PURCHASE")
    /// `RENEWAL`.
    public static let renewal = TransactionReason(rawValue: "RENEWAL")
}
