/// One purchase's whole life, stored compactly (56 bytes) so that a million fit in little memory: when it
/// starts, how its charges run, and how it ends. Everything a store answers (transactions, order ids, states,
/// notifications) is derived from it at request time, for the simulator clock's now.
///
/// Charges run in up to two segments: `firstCount` charges of `product` every period from `startMillis`, then
/// `secondCount` charges of `secondProduct` every period from `switchMillis`. What lies between the segments
/// is the `transition`; what follows the last charge is the `ending`.
struct PurchasePlan: Sendable, Equatable {
    /// What joins the two segments.
    enum Transition: UInt8, Sendable {
        /// One segment only.
        case none
        /// Apple: a higher tier bought mid-period (takes effect at once).
        case upgrade
        /// Apple: a lower tier from the next renewal on.
        case downgrade
        /// A failed renewal, grace then billing retry (Apple) or on hold (Google), then a successful charge.
        case recovery
        /// Google: paused between the segments, then resumed.
        case resume
    }

    /// What follows the last charge.
    enum Ending: UInt8, Sendable {
        /// Keeps renewing past the scenario's horizon.
        case renewing
        /// Auto-renew turned off at `cancelMillis`; expires at the end of the paid period.
        case voluntary
        /// Renewal fails: grace (`graceDays`), then billing retry / on hold (`holdDays`), then expired.
        case billingExpired
        /// Google: replaced at `endMillis` by the purchase `replacedBy` (upgrade, downgrade or re-signup).
        case replaced
        /// Google: a pending purchase, cancelled at `endMillis` (0: still pending).
        case pendingCanceled
        /// Revoked by a refund at `endMillis`.
        case revoked
        /// A one-time product: no renewals.
        case oneTime
    }

    /// Flag bits.
    struct Flags: OptionSet, Sendable, Equatable {
        let rawValue: UInt8
        /// Apple: made in the sandbox environment.
        static let sandbox = Flags(rawValue: 1)
        /// Google: a test purchase (`testPurchase: {}`).
        static let testPurchase = Flags(rawValue: 2)
        /// Apple: carries an `appAccountToken`.
        static let appAccountToken = Flags(rawValue: 4)
        /// Google: not acknowledged yet.
        static let unacknowledged = Flags(rawValue: 8)
        /// Apple: shared through Family Sharing (`inAppOwnershipType` FAMILY_SHARED).
        static let familyShared = Flags(rawValue: 16)
    }

    var startMillis: Int64
    var switchMillis: Int64 = 0
    var cancelMillis: Int64 = 0
    var endMillis: Int64 = 0
    var linkedFrom: Int32 = -1
    var replacedBy: Int32 = -1
    var firstCount: UInt16 = 1
    var secondCount: UInt16 = 0
    var product: UInt16
    var secondProduct: UInt16
    var app: UInt8
    var transition: Transition = .none
    var ending: Ending = .renewing
    var graceDays: UInt8 = 0
    var holdDays: UInt8 = 0
    var quantity: UInt8 = 1
    var flags: Flags = []

    /// All charges (successful payments) over the plan's life, visible or not.
    var chargeCount: Int { Int(firstCount) + Int(secondCount) }

    /// Whether this is a one-time purchase.
    var isOneTime: Bool { ending == .oneTime }
}
