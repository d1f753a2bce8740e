/// Product prices from the configuration, per currency: the estimate of a Google refund the Orders API cannot price.
///
/// An estimate is only ever in the sale's own currency: a price configured in USD says nothing of a sale in JPY.
/// When the sale's currency is not known, or no price is configured in it, the refund's amount stays unknown (note
/// `no_configured_price`) rather than wrong.
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

    /// Flattened for a statement: product ids, currencies and prices, index-aligned.
    var columns: (products: [String], currencies: [String], prices: [Int64]) {
        var columns: ([String], [String], [Int64]) = ([], [], [])
        for product in milli.keys.sorted() {
            for (currency, price) in (milli[product] ?? [:]).sorted(by: { $0.key < $1.key }) {
                columns.0.append(product)
                columns.1.append(currency)
                columns.2.append(price)
            }
        }
        return columns
    }
}
