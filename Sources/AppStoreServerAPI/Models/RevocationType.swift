/// How the App Store revoked a transaction: a full or prorated refund, or a Family Sharing revoke.
/// Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/revocationtype)
public struct RevocationType: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `REFUND_FULL`.
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")
    /// `REFUND_PRORATED`.
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")
    /// `FAMILY_REVOKE`.
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")
}
