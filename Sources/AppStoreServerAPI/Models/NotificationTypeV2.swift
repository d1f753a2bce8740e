/// The type of an App Store Server Notification V2. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/notificationtypev2)
public struct NotificationTypeV2: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `CONSUMPTION_REQUEST`.
    public static let consumptionRequest = NotificationTypeV2(rawValue: "CONSUMPTION_REQUEST")
    /// `DID_CHANGE_RENEWAL_PREF`.
    public static let didChangeRenewalPref = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// `DID_CHANGE_RENEWAL_STATUS`.
    public static let didChangeRenewalStatus = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// `DID_FAIL_TO_RENEW`.
    public static let didFailToRenew = NotificationTypeV2(rawValue: "DID_FAIL_TO_RENEW")
    /// `DID_RENEW`.
    public static let didRenew = NotificationTypeV2(rawValue: "DID_RENEW")
    /// `EXPIRED`.
    public static let expired = NotificationTypeV2(rawValue: "EXPIRED")
    /// `EXTERNAL_PURCHASE_TOKEN`.
    public static let externalPurchaseToken = NotificationTypeV2(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    /// `GRACE_PERIOD_EXPIRED`.
    public static let gracePeriodExpired = NotificationTypeV2(rawValue: "GRACE_PERIOD_EXPIRED")
    /// `OFFER_REDEEMED`.
    public static let offerRedeemed = NotificationTypeV2(rawValue: "OFFER_REDEEMED")
    /// `ONE_TIME_CHARGE`.
    public static let oneTimeCharge = NotificationTypeV2(rawValue: "ONE_TIME_CHARGE")
    /// `PRICE_INCREASE`.
    public static let priceIncrease = NotificationTypeV2(rawValue: "PRICE_INCREASE")
    /// `REFUND`.
    public static let refund = NotificationTypeV2(rawValue: "REFUND")
    /// `REFUND_DECLINED`.
    public static let refundDeclined = NotificationTypeV2(rawValue: "REFUND_DECLINED")
    /// `REFUND_REVERSED`.
    public static let refundReversed = NotificationTypeV2(rawValue: "REFUND_REVERSED")
    /// `RENEWAL_EXTENDED`.
    public static let renewalExtended = NotificationTypeV2(rawValue: "RENEWAL_EXTENDED")
    /// `RENEWAL_EXTENSION`.
    public static let renewalExtension = NotificationTypeV2(rawValue: "RENEWAL_EXTENSION")
    /// `REVOKE`.
    public static let revoke = NotificationTypeV2(rawValue: "REVOKE")
    /// `SUBSCRIBED`.
    public static let subscribed = NotificationTypeV2(rawValue: "SUBSCRIBED")
    /// `TEST`.
    public static let test = NotificationTypeV2(rawValue: "TEST")
}
