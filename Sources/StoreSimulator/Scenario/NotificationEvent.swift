/// One App Store Server Notification V2 in an app's history, stored in 16 bytes; the signed payload is made
/// when a client asks for it.
struct NotificationEvent: Sendable, Hashable {
    /// `notificationType` values the simulator sends.
    enum Kind: UInt8, Sendable, CaseIterable {
        case subscribed, didRenew, didChangeRenewalPref, didChangeRenewalStatus, didFailToRenew
        case gracePeriodExpired, expired, refund, refundReversed, revoke, oneTimeCharge
        case consumptionRequest, refundDeclined

        /// The JSON value.
        var name: String {
            switch self {
            case .subscribed: "SUBSCRIBED"
            case .didRenew: "DID_RENEW"
            case .didChangeRenewalPref: "DID_CHANGE_RENEWAL_PREF"
            case .didChangeRenewalStatus: "DID_CHANGE_RENEWAL_STATUS"
            case .didFailToRenew: "DID_FAIL_TO_RENEW"
            case .gracePeriodExpired: "GRACE_PERIOD_EXPIRED"
            case .expired: "EXPIRED"
            case .refund: "REFUND"
            case .refundReversed: "REFUND_REVERSED"
            case .revoke: "REVOKE"
            case .oneTimeCharge: "ONE_TIME_CHARGE"
            case .consumptionRequest: "CONSUMPTION_REQUEST"
            case .refundDeclined: "REFUND_DECLINED"
            }
        }
    }

    /// `subtype` values the simulator sends.
    enum Subtype: UInt8, Sendable, CaseIterable {
        case none, initialBuy, upgrade, downgrade, autoRenewDisabled, gracePeriod, voluntary, billingRetry
        case billingRecovery

        /// The JSON value, or nil for none.
        var name: String? {
            switch self {
            case .none: nil
            case .initialBuy: "INITIAL_BUY"
            case .upgrade: "UPGRADE"
            case .downgrade: "DOWNGRADE"
            case .autoRenewDisabled: "AUTO_RENEW_DISABLED"
            case .gracePeriod: "GRACE_PERIOD"
            case .voluntary: "VOLUNTARY"
            case .billingRetry: "BILLING_RETRY"
            case .billingRecovery: "BILLING_RECOVERY"
            }
        }
    }

    /// When the notification was sent (ms).
    var millis: Int64
    /// The purchase (index into the scenario's plans).
    var plan: Int32
    /// The charge whose transaction the notification carries.
    var charge: UInt16
    var kind: Kind
    var subtype: Subtype
}
