import Foundation

/// Google's `Money`: `units` (an int64, sent as a string) and `nanos` (10^-9 units, same sign) of `currencyCode`.
/// See [Money](https://developers.google.com/android-publisher/api-ref/rest/v3/Money).
public struct PlayMoney: Sendable, Equatable, Codable {
    /// ISO 4217 code.
    public var currencyCode: String?
    /// Whole units.
    public var units: Int64
    /// Nano units, -999,999,999 ... 999,999,999.
    public var nanos: Int32

    /// Creates an amount.
    public init(currencyCode: String?, units: Int64, nanos: Int32) {
        self.currencyCode = currencyCode
        self.units = units
        self.nanos = nanos
    }

    enum CodingKeys: String, CodingKey { case currencyCode, units, nanos }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        currencyCode = try container.decodeIfPresent(String.self, forKey: .currencyCode)
        if let text = try? container.decodeIfPresent(String.self, forKey: .units) {
            guard let value = Int64(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .units, in: container, debugDescription: "units is not an int64")
            }
            units = value
        } else {
            units = try container.decodeIfPresent(Int64.self, forKey: .units) ?? 0
        }
        nanos = try container.decodeIfPresent(Int32.self, forKey: .nanos) ?? 0
        guard (-999_999_999...999_999_999).contains(nanos), units == 0 || nanos == 0 || (units > 0) == (nanos > 0)
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .nanos, in: container, debugDescription: "nanos out of range or of the other sign than units")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(currencyCode, forKey: .currencyCode)
        try container.encode(String(units), forKey: .units)
        try container.encode(nanos, forKey: .nanos)
    }

    /// The amount as one integer of nanos (units x 10^9 + nanos), or `nil` when it does not fit an `Int64`
    /// (more than 9.2 billion units).
    public var totalNanos: Int64? {
        let (scaled, overflow) = units.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        let (sum, overflowSum) = scaled.addingReportingOverflow(Int64(nanos))
        return overflowSum ? nil : sum
    }
}

/// One order of `orders.get` / `orders.batchget`: what the buyer paid, in which country, and what was refunded.
/// See [Order](https://developers.google.com/android-publisher/api-ref/rest/v3/orders#Order).
public struct PlayOrder: Sendable, Equatable, Codable {
    /// `buyerAddress`.
    public struct BuyerAddress: Sendable, Equatable, Codable {
        public var buyerCountry: String?
    }

    /// `lineItems[].oneTimePurchaseDetails`.
    public struct OneTimePurchaseDetails: Sendable, Equatable, Codable {
        public var quantity: Int?
    }

    /// `lineItems[].subscriptionDetails`.
    public struct SubscriptionDetails: Sendable, Equatable, Codable {
        public var basePlanId: String?
        public var servicePeriodStartTime: String?
        public var servicePeriodEndTime: String?
    }

    /// One line item.
    public struct LineItem: Sendable, Equatable, Codable {
        public var productId: String?
        public var listingPrice: PlayMoney?
        public var total: PlayMoney?
        public var tax: PlayMoney?
        public var oneTimePurchaseDetails: OneTimePurchaseDetails?
        public var subscriptionDetails: SubscriptionDetails?
    }

    /// `refundDetails`: the amount refunded, tax included, and the tax.
    public struct RefundDetails: Sendable, Equatable, Codable {
        public var total: PlayMoney?
        public var tax: PlayMoney?
    }

    /// `orderHistory.refundEvent`: the order was fully refunded.
    public struct RefundEvent: Sendable, Equatable, Codable {
        public var eventTime: String?
        public var refundDetails: RefundDetails?
        /// `OTHER` or `CHARGEBACK`.
        public var refundReason: String?
    }

    /// `orderHistory.partialRefundEvents[]`.
    public struct PartialRefundEvent: Sendable, Equatable, Codable {
        public var createTime: String?
        public var processTime: String?
        /// `PENDING` or `PROCESSED_SUCCESSFULLY`.
        public var state: String?
        public var refundDetails: RefundDetails?
    }

    /// `orderHistory`.
    public struct OrderHistory: Sendable, Equatable, Codable {
        public var refundEvent: RefundEvent?
        public var partialRefundEvents: [PartialRefundEvent]?
    }

    public var orderId: String
    public var purchaseToken: String?
    /// `PENDING`, `PROCESSED`, `CANCELED`, `PENDING_REFUND`, `PARTIALLY_REFUNDED`, `REFUNDED`.
    public var state: String?
    public var buyerAddress: BuyerAddress?
    public var createTime: String?
    public var total: PlayMoney?
    public var tax: PlayMoney?
    public var developerRevenueInBuyerCurrency: PlayMoney?
    public var lineItems: [LineItem]?
    public var orderHistory: OrderHistory?

    /// Whether Google has yet to settle a refund of this order (the order is `PENDING_REFUND`, or a partial
    /// refund is `PENDING`).
    public var refundPending: Bool {
        state == "PENDING_REFUND" || (orderHistory?.partialRefundEvents ?? []).contains { $0.state == "PENDING" }
    }
}

/// The answer of `orders.batchget`.
public struct BatchGetOrdersResponse: Sendable, Equatable, Decodable {
    public var orders: [PlayOrder]?
}
