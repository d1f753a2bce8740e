/// A product sold in a scenario, on both stores under the same id.
public struct SimulatedProduct: Codable, Sendable, Equatable {
    /// What is sold.
    public enum Kind: String, Codable, Sendable {
        /// Auto-renewable subscription.
        case subscription
        /// Consumable (Google: a quantity-based one-time product).
        case consumable
        /// Non-consumable one-time product.
        case nonConsumable
    }

    /// The store product id.
    public var productId: String
    /// What is sold.
    public var kind: Kind
    /// Length of one subscription period in days (7, 30 or 365); 0 for one-time products.
    public var periodDays: Int
    /// Rank for upgrade/downgrade classification: higher is an upgrade.
    public var tier: Int
    /// Price of one unit in milliunits of `currency` (9990 = 9.99).
    public var priceMilli: Int64
    /// ISO 4217 currency.
    public var currency: String
    /// Apple subscription group (products in one group replace each other).
    public var group: String

    /// Creates a product.
    public init(
        productId: String, kind: Kind, periodDays: Int, tier: Int, priceMilli: Int64, currency: String,
        group: String = "20000001"
    ) {
        self.productId = productId
        self.kind = kind
        self.periodDays = periodDays
        self.tier = tier
        self.priceMilli = priceMilli
        self.currency = currency
        self.group = group
    }

    /// Period length in milliseconds.
    var periodMillis: Int64 { Int64(periodDays) * 86_400_000 }

    /// Apple's `type` for the product.
    var appleType: String {
        switch kind {
        case .subscription: "Auto-Renewable Subscription"
        case .consumable: "Consumable"
        case .nonConsumable: "Non-Consumable"
        }
    }

    /// Apple storefront (ISO 3166-1 alpha-3) that sells in the product's currency.
    var storefront: String {
        switch currency {
        case "EUR": "DEU"
        case "GBP": "GBR"
        case "JPY": "JPN"
        default: "USA"
        }
    }

    /// The default catalogue: subscriptions in three tiers and three period lengths, and two one-time products.
    public static let defaults: [SimulatedProduct] = [
        SimulatedProduct(
            productId: "com.example.basic.monthly", kind: .subscription, periodDays: 30, tier: 1, priceMilli: 4990,
            currency: "USD"),
        SimulatedProduct(
            productId: "com.example.premium.weekly", kind: .subscription, periodDays: 7, tier: 2, priceMilli: 2990,
            currency: "USD"),
        SimulatedProduct(
            productId: "com.example.premium.monthly", kind: .subscription, periodDays: 30, tier: 2, priceMilli: 9990,
            currency: "USD"),
        SimulatedProduct(
            productId: "com.example.premium.yearly", kind: .subscription, periodDays: 365, tier: 2,
            priceMilli: 79990, currency: "EUR"),
        SimulatedProduct(
            productId: "com.example.pro.monthly", kind: .subscription, periodDays: 30, tier: 3, priceMilli: 1_990_000,
            currency: "JPY"),
        SimulatedProduct(
            productId: "com.example.coins.100", kind: .consumable, periodDays: 0, tier: 0, priceMilli: 990,
            currency: "USD"),
        SimulatedProduct(
            productId: "com.example.lifetime", kind: .nonConsumable, periodDays: 0, tier: 0, priceMilli: 149_990,
            currency: "GBP"),
    ]
}
