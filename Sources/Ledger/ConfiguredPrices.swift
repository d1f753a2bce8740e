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

    /// Flattened for a statement: product ids, currencies, prices and whether the currency is the product's only
    /// one, index-aligned.
    var columns: (products: [String], currencies: [String], prices: [Int64], sole: [Bool]) {
        var columns: ([String], [String], [Int64], [Bool]) = ([], [], [], [])
        for product in milli.keys.sorted() {
            let prices = milli[product] ?? [:]
            for (currency, price) in prices.sorted(by: { $0.key < $1.key }) {
                columns.0.append(product)
                columns.1.append(currency)
                columns.2.append(price)
                columns.3.append(prices.count == 1)
            }
        }
        return columns
    }
}
