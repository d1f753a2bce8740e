/// The latest transactions of one subscription group.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/subscriptiongroupidentifieritem)
public struct SubscriptionGroupIdentifierItem: Decodable, Sendable, Hashable {
    /// The subscription group.
    public var subscriptionGroupIdentifier: String?
    /// The latest transaction of each subscription in the group; empty when absent.
    public var lastTransactions: [LastTransactionsItem]
    /// Items of the list that could not be read (left out of it): the job logs and counts them.
    public var unreadableItems = 0

    enum CodingKeys: String, CodingKey {
        case subscriptionGroupIdentifier, lastTransactions
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        subscriptionGroupIdentifier = c.lenientString(.subscriptionGroupIdentifier)
        (lastTransactions, unreadableItems) = try c.pageList(.lastTransactions)
    }
}
