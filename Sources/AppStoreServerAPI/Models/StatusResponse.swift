/// The statuses of all of a customer's subscriptions (Get All Subscription Statuses). Arrays have no guaranteed order.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/statusresponse)
public struct StatusResponse: Decodable, Sendable, Hashable {
    /// The server environment.
    public var environment: Environment?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's Apple ID.
    public var appAppleId: Int64?
    /// One item per subscription group; empty when absent.
    public var data: [SubscriptionGroupIdentifierItem]
    /// Items of the list that could not be read (left out of it): the job logs and counts them.
    public var unreadableItems = 0

    enum CodingKeys: String, CodingKey {
        case environment, bundleId, appAppleId, data
    }

    /// Decodes leniently, but a `data` that is not a list fails the answer (read as empty, it would say the customer has no subscription).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        environment = c.lenient(.environment)
        bundleId = c.lenientString(.bundleId)
        appAppleId = c.lenientInt64(.appAppleId)
        (data, unreadableItems) = try c.pageList(.data)
    }
}
