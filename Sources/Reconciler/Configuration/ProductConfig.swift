import Foundation

/// One entry of `products:`: a tier for upgrade/downgrade classification and prices for Google refunds.
public struct ProductConfig: Decodable, Sendable, Equatable {
    /// Higher tiers are upgrades.
    public var tier: Int?
    /// The product's price in milliunits of `currency` (the single-currency form of `prices`).
    public var priceMilli: Int64?
    /// ISO 4217 currency of `priceMilli`.
    public var currency: String?
    /// The product's price per ISO 4217 currency, in milliunits (`prices: {USD: 9.99, JPY: 1500}` in the file).
    public var prices: [String: Int64]

    enum CodingKeys: String, CodingKey, CaseIterable { case tier, priceMilli, currency, prices }

    /// Creates a product entry.
    public init(tier: Int? = nil, priceMilli: Int64? = nil, currency: String? = nil, prices: [String: Int64] = [:]) {
        self.tier = tier
        self.priceMilli = priceMilli
        self.currency = currency
        self.prices = prices
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tier = try container.decodeIfPresent(Int.self, forKey: .tier)
        priceMilli = try container.decodeIfPresent(Int64.self, forKey: .priceMilli)
        currency = try container.decodeIfPresent(String.self, forKey: .currency)?.uppercased()
        if let priceMilli, priceMilli < 0 {
            throw DecodingError.dataCorruptedError(
                forKey: .priceMilli, in: container, debugDescription: "\(priceMilli): a price is not negative")
        }
        if let currency, currency.count != 3 || !currency.allSatisfy({ $0.isLetter && $0.isASCII }) {
            throw DecodingError.dataCorruptedError(
                forKey: .currency, in: container, debugDescription: "\(currency): expected an ISO 4217 currency code")
        }
        if (priceMilli == nil) != (currency == nil) {
            throw DecodingError.dataCorruptedError(
                forKey: priceMilli == nil ? .currency : .priceMilli, in: container,
                debugDescription: "priceMilli and currency go together (or use prices: {EUR: \"9.99\"})")
        }
        prices = [:]
        for (code, text) in try container.decodeIfPresent([String: String].self, forKey: .prices) ?? [:] {
            guard code.count == 3, code.allSatisfy({ $0.isLetter && $0.isASCII }) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .prices, in: container, debugDescription: "\(code): expected an ISO 4217 currency code")
            }
            guard let milli = Self.milli(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .prices, in: container,
                    debugDescription: "\(code): \(text) is not a price (a number with at most 3 decimals, e.g. 9.99)")
            }
            // `usd` and `USD` are one currency: which one won would change from run to run.
            let currencyCode = code.uppercased()
            guard prices.updateValue(milli, forKey: currencyCode) == nil, currencyCode != currency else {
                throw DecodingError.dataCorruptedError(
                    forKey: .prices, in: container, debugDescription: "\(currencyCode) is given twice")
            }
        }
    }

    /// Every configured price by currency: `prices`, and `priceMilli` in `currency`.
    public var pricesByCurrency: [String: Int64] {
        var all = prices
        if let priceMilli, let currency, all[currency] == nil { all[currency] = priceMilli }
        return all
    }

    /// `"9.99"` as milliunits (9990), exactly; `nil` for anything but a non-negative number of at most 3 decimals.
    static func milli(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let units = Int64(parts[0]), units >= 0, parts[0].allSatisfy(\.isNumber) else { return nil }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= 3, fraction.allSatisfy(\.isNumber), parts.count == 1 || !fraction.isEmpty,
            let thousandths = Int64(fraction + String(repeating: "0", count: 3 - fraction.count))
        else { return nil }
        let (scaled, overflow) = units.multipliedReportingOverflow(by: 1000)
        return overflow ? nil : scaled + thousandths
    }
}
