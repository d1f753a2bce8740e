import Foundation
import PlayDeveloperAPI

/// Builds a Google Orders API `Order` as the store sends it (JSON), decoded by the client's own model: amounts are
/// written as decimal strings, so a test states them in the currency's units, as a receipt would.
struct OrderHistoryBuilder {
    var orderId = "GPA.1111-2222-3333-44444"
    var currency: String
    var total: String
    var tax: String
    var quantity: Int
    var state = "PROCESSED"
    var refund: [String: Any]?
    var partials: [[String: Any]] = []
    /// Whether the order lists its line items (without them, the units bought are unknown).
    var lineItems = true

    init(currency: String, total: String, tax: String, quantity: Int) {
        self.currency = currency
        self.total = total
        self.tax = tax
        self.quantity = quantity
    }

    /// `"6.93"` as Google's Money (`units`, `nanos`).
    static func money(_ amount: String, _ currency: String) -> [String: Any] {
        let negative = amount.hasPrefix("-")
        let digits = negative ? String(amount.dropFirst()) : amount
        let parts = digits.split(separator: ".", maxSplits: 1).map(String.init)
        let units = Int64(parts[0]) ?? 0
        var fraction = parts.count > 1 ? parts[1] : ""
        fraction += String(repeating: "0", count: 9 - fraction.count)
        let nanos = Int32(fraction) ?? 0
        return ["currencyCode": currency, "units": "\(negative ? -units : units)", "nanos": negative ? -nanos : nanos]
    }

    static func time(_ millis: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    /// A partial refund event created at `created` and processed `processDelay` milliseconds later.
    mutating func partial(
        _ amount: String, tax: String, created: Int64, processDelay: Int64 = 1500,
        state: String = "PROCESSED_SUCCESSFULLY"
    ) {
        partials.append([
            "createTime": Self.time(created), "processTime": Self.time(created + processDelay), "state": state,
            "refundDetails": ["total": Self.money(amount, currency), "tax": Self.money(tax, currency)],
        ])
    }

    mutating func fullRefund(_ amount: String, tax: String, at millis: Int64) {
        refund = [
            "eventTime": Self.time(millis), "refundReason": "OTHER",
            "refundDetails": ["total": Self.money(amount, currency), "tax": Self.money(tax, currency)],
        ]
    }

    func json() throws -> Data {
        var history: [String: Any] = [:]
        if let refund { history["refundEvent"] = refund }
        if !partials.isEmpty { history["partialRefundEvents"] = partials }
        var order: [String: Any] = [
            "orderId": orderId, "purchaseToken": "token-\(orderId)", "state": state,
            "buyerAddress": ["buyerCountry": "GB"], "total": Self.money(total, currency),
            "tax": Self.money(tax, currency),
            "lineItems": [
                [
                    "productId": "coins", "total": Self.money(total, currency), "tax": Self.money(tax, currency),
                    "oneTimePurchaseDetails": ["quantity": quantity],
                ]
            ],
            "orderHistory": history,
        ]
        if !lineItems { order["lineItems"] = nil }
        return try JSONSerialization.data(withJSONObject: order, options: [.sortedKeys])
    }

    func order() throws -> PlayOrder { try JSONDecoder().decode(PlayOrder.self, from: json()) }
}
