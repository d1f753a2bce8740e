import Foundation

/// The filters of a Get Transaction History request (sent as query parameters on every page).
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history)
public struct TransactionHistoryRequest: Sendable, Hashable {
    /// A product type as this endpoint names it (not the payload's `type` strings).
    public struct ProductType: StoreStringValue {
        /// The value as Apple expects it.
        public var rawValue: String
        /// Wraps any value.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Auto-renewable subscriptions.
        public static let autoRenewable = ProductType(rawValue: "AUTO_RENEWABLE")
        /// Non-renewing subscriptions.
        public static let nonRenewable = ProductType(rawValue: "NON_RENEWABLE")
        /// Consumables.
        public static let consumable = ProductType(rawValue: "CONSUMABLE")
        /// Non-consumables.
        public static let nonConsumable = ProductType(rawValue: "NON_CONSUMABLE")
    }

    /// The sort order by modification date.
    public struct Order: StoreStringValue {
        /// The value as Apple expects it.
        public var rawValue: String
        /// Wraps any value.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Oldest first.
        public static let ascending = Order(rawValue: "ASCENDING")
        /// Newest first.
        public static let descending = Order(rawValue: "DESCENDING")
    }

    /// Only transactions from this date.
    public var startDate: Date?
    /// Only transactions before this date.
    public var endDate: Date?
    /// Only these products.
    public var productIds: [String]
    /// Only these product types.
    public var productTypes: [ProductType]
    /// The order.
    public var sort: Order?
    /// Only these subscription groups.
    public var subscriptionGroupIdentifiers: [String]
    /// Only purchased or only family-shared.
    public var inAppOwnershipType: InAppOwnershipType?
    /// Only revoked (`true`) or only not revoked (`false`).
    public var revoked: Bool?

    /// Creates a filter; the default filters nothing.
    public init(
        startDate: Date? = nil, endDate: Date? = nil, productIds: [String] = [], productTypes: [ProductType] = [],
        sort: Order? = nil, subscriptionGroupIdentifiers: [String] = [], inAppOwnershipType: InAppOwnershipType? = nil,
        revoked: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.sort = sort
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }

    /// The query parameters, in a stable order.
    var queryItems: [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        if let startDate { items.append(("startDate", String(startDate.millisecondsSince1970))) }
        if let endDate { items.append(("endDate", String(endDate.millisecondsSince1970))) }
        items += productIds.map { ("productId", $0) }
        items += productTypes.map { ("productType", $0.rawValue) }
        if let sort { items.append(("sort", sort.rawValue)) }
        items += subscriptionGroupIdentifiers.map { ("subscriptionGroupIdentifier", $0) }
        if let inAppOwnershipType { items.append(("inAppOwnershipType", inAppOwnershipType.rawValue)) }
        if let revoked { items.append(("revoked", revoked ? "true" : "false")) }
        return items
    }
}
