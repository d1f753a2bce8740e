/// One refund, revocation or void of one charge of a purchase: Apple's revoked transaction or Google's voided
/// order (a quantity-based partial refund is one record per part).
struct RefundRecord: Sendable, Equatable {
    /// What kind of refund.
    enum Kind: UInt8, Sendable {
        /// Apple REFUND_FULL / Google full void.
        case full
        /// Apple REFUND_PRORATED (`percentage` says how much).
        case prorated
        /// Apple FAMILY_REVOKE.
        case familyRevoke
        /// Google quantity-based partial refund of `quantity` units (listed only with
        /// `includeQuantityBasedPartialRefund=true`).
        case partialQuantity
    }

    /// The purchase (index into the scenario's plans).
    var plan: Int32
    /// Which charge of the purchase (0 = the first).
    var charge: UInt16
    var kind: Kind
    /// Apple `revocationReason` (0 other, 1 issue in the app) or Google `voidedReason` (0...8).
    var reason: UInt8
    /// Google `voidedSource` (0 user, 1 developer, 2 Google).
    var source: UInt8 = 0
    /// Google: units refunded by a partial part.
    var quantity: UInt8 = 0
    /// Apple `revocationPercentage` in milliunits (50000 = 50 %) for prorated refunds.
    var percentage: Int32 = 0
    /// When the refund happened: Apple `revocationDate`, Google `voidedTimeMillis`.
    var eventMillis: Int64
    /// Google: when the void was recorded (what the list's window filters on); equals `eventMillis` unless late.
    var recordedMillis: Int64
    /// Apple: when the refund was reversed (REFUND_REVERSED), or `Int64.max`.
    var reversedMillis: Int64 = .max

    /// Whether the refund takes away access from `eventMillis` (until reversed).
    var revokes: Bool { kind != .partialQuantity }
}
