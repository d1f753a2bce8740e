/// Whether a subscription renews automatically. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/autorenewstatus)
public struct AutoRenewStatus: StoreIntValue {
    /// The value as Apple sends it.
    public var rawValue: Int

    /// Wraps any value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 0: Automatic renewal is off.
    public static let off = AutoRenewStatus(rawValue: 0)
    /// 1: Automatic renewal is on.
    public static let on = AutoRenewStatus(rawValue: 1)
}
