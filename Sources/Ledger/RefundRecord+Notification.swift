import Foundation
import Postgres

/// Google's `voidedPurchaseNotification` (a Real-time developer notification) as a ledger record: the refund is
/// recorded when the notification comes, and the nightly voided list fills in the rest of the same row. Pure.
extension RefundRecord {
    /// What a voided-purchase notification says (`voidedPurchaseNotification` with its envelope's
    /// `eventTimeMillis`), as read from the message.
    public struct VoidedNotice: Sendable, Equatable {
        /// The purchase's token.
        public var purchaseToken: String?
        /// The voided order (the ledger's key, as in the voided list).
        public var orderId: String?
        /// 1 subscription, 2 one-time product.
        public var productType: Int?
        /// 1 a full refund, 2 a quantity-based partial refund.
        public var refundType: Int?
        /// The envelope's `eventTimeMillis`.
        public var eventMillis: Int64?

        /// A notice of these fields.
        public init(
            purchaseToken: String?, orderId: String?, productType: Int?, refundType: Int?, eventMillis: Int64?
        ) {
            self.purchaseToken = purchaseToken
            self.orderId = orderId
            self.productType = productType
            self.refundType = refundType
            self.eventMillis = eventMillis
        }
    }

    /// A voided-purchase notification as a record, keyed as the voided list keys the same void, so that the list's
    /// row later upserts this one: a full refund (`refundType` 1) is the whole order (part key `''`, quantity 1).
    ///
    /// The notification lacks what the list gives: `voidedTimeMillis` (the notification's `eventTimeMillis` stands
    /// in), `voidedReason` (label `unknown`, no code), `voidedSource` and `purchaseTimeMillis` (none), and no amount
    /// (`estimated`, as a voided row). A quantity-based partial refund (`refundType` 2) is `notARefund` here: the
    /// list keys each part by its `voidedTimeMillis` and `voidedQuantity`, which the notification does not carry, so
    /// a row made now would be a second row beside the list's; the nightly list records it. So is an unknown
    /// `refundType`.
    /// - Parameters:
    ///   - payload: the notification's JSON (the `DeveloperNotification`), kept until the list's row replaces it.
    ///   - receivedAt: when it came, for a time in the future.
    public static func voided(_ notice: VoidedNotice, payload: Data, receivedAt: Date = Date()) -> Intake {
        guard notice.refundType == 1 else { return .notARefund }
        guard let orderId = notice.orderId, !orderId.isEmpty else { return .unstorable("orderId: missing") }
        guard let token = notice.purchaseToken, !token.isEmpty else { return .unstorable("purchaseToken: missing") }
        if let reason = LedgerLimits.oversized("orderId", orderId)
            ?? LedgerLimits.oversized("purchaseToken", token, limit: LedgerLimits.maxTokenLength)
        {
            return .unstorable(reason)
        }
        if PostgresConnection.containsNUL(orderId) || PostgresConnection.containsNUL(token) {
            return .unstorable("orderId or purchaseToken contains a NUL byte, which PostgreSQL text cannot hold")
        }
        let now = Int64((receivedAt.timeIntervalSince1970 * 1000).rounded())
        guard let millis = notice.eventMillis, (0...min(LedgerLimits.maxMillis, now + clockSkew)).contains(millis)
        else {
            return .unstorable("eventTimeMillis: \(notice.eventMillis.map(String.init) ?? "missing") is not a time")
        }
        if let escape = LedgerLimits.unstorableEscape(in: payload) {
            return .unstorable("its JSON holds \(escape), which PostgreSQL jsonb cannot hold")
        }
        return .refund(
            RefundRecord(
                platform: .google, orderId: orderId, part: .whole, originalId: token, purchasedAt: nil,
                refundedAt: date(millis: millis), reasonCode: nil, reasonLabel: "unknown", sourceCode: nil,
                kind: .full, quantity: 1, amount: .estimated, payload: payload))
    }
}
