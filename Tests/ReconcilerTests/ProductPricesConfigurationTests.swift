import Foundation
import Ledger
import Reconciler
import Testing

/// `products.<id>.prices`: a configured price per currency (issue 25 item 6), read exactly, checked when the file is
/// read, and handed to the ledger per product and currency.
@Suite("products.<id>.prices")
struct ProductPricesConfigurationTests {
    static func load(_ products: String) throws -> Configuration {
        try ConfigurationLoader(environment: [:]).load(text: "products:\n" + products, source: "t.yaml")
    }

    @Test func pricesPerCurrencyAreExactMilliunits() throws {
        let configuration = try Self.load(
            "  coins: { prices: { USD: 9.99, JPY: 1500, KWD: 2.995, eur: 9.5 } }\n"
                + "  pro: { priceMilli: 4990, currency: USD }\n")
        let prices = configuration.configuredPrices
        #expect(prices.price(of: "coins", in: "USD") == 9990)
        #expect(prices.price(of: "coins", in: "JPY") == 1_500_000)
        #expect(prices.price(of: "coins", in: "KWD") == 2995)
        #expect(prices.price(of: "coins", in: "EUR") == 9500)
        #expect(prices.price(of: "coins", in: "GBP") == nil)
        // The single-currency form is the same thing in its one currency, and nothing in any other.
        #expect(prices.price(of: "pro", in: "USD") == 4990)
        #expect(prices.price(of: "pro", in: "JPY") == nil)
    }

    @Test(arguments: [
        ("  coins: { prices: { USD: 9.9999 } }\n", "USD: 9.9999 is not a price"),
        ("  coins: { prices: { USD: -1 } }\n", "USD: -1 is not a price"),
        ("  coins: { prices: { USD: ten } }\n", "USD: ten is not a price"),
        ("  coins: { prices: { DOLLAR: 1 } }\n", "DOLLAR: expected an ISO 4217 currency code"),
    ])
    func aBadPriceIsAConfigurationErrorNamingIt(_ products: String, _ message: String) throws {
        do {
            _ = try Self.load(products)
            Issue.record("accepted \(products)")
        } catch {
            #expect("\(error)".contains("products.coins.prices"), "\(error)")
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test(arguments: [
        ("  pro: { priceMilli: -9990, currency: USD }\n", "products.pro.priceMilli", "a price is not negative"),
        ("  pro: { priceMilli: 9990, currency: DOLLAR }\n", "products.pro.currency", "expected an ISO 4217"),
        ("  pro: { priceMilli: 9990 }\n", "products.pro.priceMilli", "priceMilli and currency go together"),
        ("  pro: { tier: 1, currency: USD }\n", "products.pro.currency", "priceMilli and currency go together"),
    ])
    func aBadSingleCurrencyPriceIsAConfigurationErrorNamingIt(_ products: String, _ key: String, _ message: String) {
        do {
            _ = try Self.load(products)
            Issue.record("accepted \(products)")
        } catch {
            #expect("\(error)".contains(key), "\(error)")
            #expect("\(error)".contains(message), "\(error)")
        }
    }
}
