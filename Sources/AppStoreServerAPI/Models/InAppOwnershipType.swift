/// Whether the customer bought the item or has it through Family Sharing. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/inappownershiptype)
public struct InAppOwnershipType: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `FAMILY_SHARED`.
    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")
    /// `PURCHASED`.
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")
}
