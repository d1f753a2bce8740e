import Ledger

extension Configuration {
    /// The `products:` prices the ledger estimates Google refunds with, per product and currency.
    public var configuredPrices: ConfiguredPrices {
        ConfiguredPrices(products.compactMapValues { $0.pricesByCurrency.isEmpty ? nil : $0.pricesByCurrency })
    }
}
