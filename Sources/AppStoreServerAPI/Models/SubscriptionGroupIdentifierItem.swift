/// The latest transactions of one subscription group.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/subscriptiongroupidentifieritem)
public struct SubscriptionGroupIdentifierItem: Decodable, Sendable, Hashable {
    /// The subscription group.
    public var subscriptionGroupIdentifier: String?
    /// The latest transaction of each subscription in the group; empty when absent.
    public var lastTransactions: [LastTransactionsItem]

    enum CodingKeys: String, CodingKey {
        case subscriptionGroupIdentifier, lastTransactions
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        subscriptionGroupIdentifier = c.lenientString(.subscriptionGroupIdentifier)
        lastTransactions = try c.pageList(.lastTransactions)
    }
}
