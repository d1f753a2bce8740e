/// Product prices from the configuration, per currency: the estimate of a Google refund the Orders API cannot price.
///
/// An estimate is in the sale's currency: the order's own when Google stated it, else the currency of another order
/// of the same purchase that storerecon fetched (the subscription's current order, the first order of a renewal),
/// else the product's configured currency when it has exactly one. A price configured in USD says nothing of a sale
/// in JPY: when the sale's currency is known and has no price, or is unknown and the product has several, the
/// refund's amount stays unknown (note `no_configured_price`) rather than wrong.
public struct ConfiguredPrices: Sendable, Equatable {
    /// Milliunits per product id and ISO 4217 currency.
    public var milli: [String: [String: Int64]]

    /// Prices per product id and currency.
    public init(_ milli: [String: [String: Int64]] = [:]) {
        self.milli = milli
    }

    /// The price of one unit of `productId` in `currency`, in milliunits, or `nil`.
    public func price(of productId: String?, in currency: String?) -> Int64? {
        guard let productId, let currency else { return nil }
        return milli[productId]?[currency.uppercased()]
    }

    /// The estimate of one unit of `productId` sold in `currency`: the price in that currency, or, when the sale's
    /// currency is not known, the product's one configured price.
    public func estimate(of productId: String?, in currency: String?) -> (currency: String, milli: Int64)? {
        guard let productId, let prices = milli[productId] else { return nil }
        if let currency {
            return prices[currency.uppercased()].map { (currency.uppercased(), $0) }
        }
        guard prices.count == 1, let sole = prices.first else { return nil }
        return (sole.key, sole.value)
    }

    /// Every estimate ``estimate(of:in:)`` gives, flattened for a statement: per product, one row per configured
    /// currency and one for a sale whose currency is unknown (`nil`) when the product has an estimate for it;
    /// index-aligned. A statement looks an estimate up in them, so the rule is this type's alone.
    var estimates: (products: [String], sales: [String?], currencies: [String], prices: [Int64]) {
        var rows: ([String], [String?], [String], [Int64]) = ([], [], [], [])
        for product in milli.keys.sorted() {
            let sales: [String?] = (milli[product] ?? [:]).keys.sorted() + [nil]
            for sale in sales {
                guard let estimate = estimate(of: product, in: sale) else { continue }
                rows.0.append(product)
                rows.1.append(sale)
                rows.2.append(estimate.currency)
                rows.3.append(estimate.milli)
            }
        }
        return rows
    }
}
