import Foundation
import PlayDeveloperAPI

/// What a Google refund review needs to know of its order (`orders.get` / `google_order`): the product and country
/// the rules test, the price the report counts as kept, and whether Google refunded it. Pure.
public struct GoogleReviewOrder: Sendable, Equatable {
    /// The first line item's product id.
    public var productId: String?
    /// `buyerAddress.buyerCountry` (ISO 3166-1 alpha-2), upper case.
    public var country: String?
    /// `subscription` when the line item has subscription details, else `one_time`.
    public var productType: String?
    /// The purchase token.
    public var purchaseToken: String?
    /// `Order.total` (tax included) in nanos, and its currency (upper case).
    public var priceNanos: Int64?
    public var currency: String?
    /// When the order was made, or the subscription period began.
    public var purchasedAt: Date?
    /// Subscriptions: the end of the service period.
    public var expiresAt: Date?
    /// When the customer first bought it: the order's creation for a one-time product and for a subscription's
    /// first order; for a renewal, its first order's (``firstOrderId``), once that is read.
    public var firstPurchasedAt: Date?
    /// A subscription renewal's first order: the order id without its renewal suffix (`GPA.1234-5678-9012-34567..2`
    /// is the third renewal of `GPA.1234-5678-9012-34567`); `nil` for any other order.
    public var firstOrderId: String?
    /// `Order.state`, raw.
    public var state: String?
    /// `orderHistory.refundEvent.eventTime`, when Google sent one.
    public var refundedAt: Date?
    /// When each of `orderHistory.partialRefundEvents[]` was made (its `createTime`), those Google dated.
    public var partiallyRefundedAt: [Date] = []

    /// Reads an order as Google sent it.
    public init(_ order: PlayOrder) {
        let item = order.lineItems?.first
        productId = item?.productId
        country = order.buyerAddress?.buyerCountry?.uppercased()
        productType = item.map { $0.subscriptionDetails == nil ? "one_time" : "subscription" }
        purchaseToken = order.purchaseToken
        priceNanos = order.total?.totalNanos
        currency = order.total?.currencyCode?.uppercased()
        let period = item?.subscriptionDetails
        purchasedAt = Self.date(period?.servicePeriodStartTime ?? order.createTime)
        expiresAt = Self.date(period?.servicePeriodEndTime)
        firstOrderId = period == nil ? nil : Self.firstOrderId(of: order.orderId)
        if firstOrderId == nil { firstPurchasedAt = Self.date(order.createTime) }
        state = order.state
        refundedAt = Self.date(order.orderHistory?.refundEvent?.eventTime)
        partiallyRefundedAt = (order.orderHistory?.partialRefundEvents ?? []).compactMap { Self.date($0.createTime) }
    }

    /// The first order of the subscription whose renewal is `orderId` (Google numbers renewals `..0`, `..1`, ...
    /// after the first order's id); `nil` when `orderId` is no renewal's.
    static func firstOrderId(of orderId: String) -> String? {
        guard let suffix = orderId.range(of: "..", options: .backwards) else { return nil }
        let renewal = orderId[suffix.upperBound...]
        guard !renewal.isEmpty, renewal.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return String(orderId[..<suffix.lowerBound])
    }

    /// The states of an order Google refunded (or is refunding).
    static let refundedStates: Set<String> = ["REFUNDED", "PARTIALLY_REFUNDED", "PENDING_REFUND"]

    /// Google's decision on a review of a request received at `since` that ended at `reviewEnd`, read after it:
    /// `refunded` when the order is refunded (and its refund event, when dated, is within the review: not before the
    /// request, as a refund then is an earlier review's or none, nor later than `reviewEnd`; an
    /// order refunded in part only, by a partial refund made within the review: one made before the request, a
    /// goodwill refund, or after its end is not the review's), else `declined`. A refund dated at or after
    /// `askedAgainAt`, when Google asked about the order again, is that later review's outcome, not this one's.
    public func decision(reviewEnd: Date, since: Date? = nil, askedAgainAt: Date? = nil) -> RefundRequestDecision {
        guard let state, Self.refundedStates.contains(state) else { return .declined }
        func ours(_ date: Date) -> Bool {
            date >= (since ?? .distantPast) && date <= reviewEnd && date < (askedAgainAt ?? .distantFuture)
        }
        if let refundedAt { return ours(refundedAt) ? .refunded : .declined }
        if state == "PARTIALLY_REFUNDED", !partiallyRefundedAt.isEmpty {
            return partiallyRefundedAt.contains(where: ours) ? .refunded : .declined
        }
        return .refunded
    }

    private static func date(_ text: String?) -> Date? {
        text.flatMap { RFC3339Timestamp($0)?.date }
    }
}

/// When Google's review of a refund request is over. Google takes the developer's answer for 24 hours and then
/// decides; storerecon reads the outcome a day after that deadline, so Google has acted and the nightly voided pull
/// (or a voided notification) has had its run. Until then the request's decision stays `pending`.
public enum GoogleReviewPeriod {
    /// How long after the answer deadline the outcome is read.
    public static let settle: TimeInterval = 24 * 3600

    /// The end of the review of a request whose answer deadline is `deadline`.
    public static func end(deadline: Date) -> Date { deadline.addingTimeInterval(settle) }
}
