/// Why the App Store refunded or revoked a transaction. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/revocationreason)
public struct RevocationReason: StoreIntValue {
    /// The value as Apple sends it.
    public var rawValue: Int

    /// Wraps any value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 0: Refunded for another reason.
    public static let other = RevocationReason(rawValue: 0)
    /// 1: Refunded for an actual or perceived issue in the app.
    public static let appIssue = RevocationReason(rawValue: 1)
}
