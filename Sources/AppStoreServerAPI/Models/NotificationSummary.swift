/// The summary a notification carries instead of ``NotificationData`` when it reports a request that covered many
/// customers (renewal-date extensions).
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/summary)
public struct NotificationSummary: Decodable, Sendable, Hashable {
    /// The server environment.
    public var environment: Environment?
    /// The app's Apple ID.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The product the request covered.
    public var productId: String?
    /// The identifier of the request.
    public var requestIdentifier: String?
    /// How many subscriptions the request succeeded for.
    public var succeededCount: Int64?
    /// How many subscriptions the request failed for.
    public var failedCount: Int64?

    enum CodingKeys: String, CodingKey {
        case environment, appAppleId, bundleId, productId, requestIdentifier, succeededCount, failedCount
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        environment = c.lenient(.environment)
        appAppleId = c.lenientInt64(.appAppleId)
        bundleId = c.lenientString(.bundleId)
        productId = c.lenientString(.productId)
        requestIdentifier = c.lenientString(.requestIdentifier)
        succeededCount = c.lenientInt64(.succeededCount)
        failedCount = c.lenientInt64(.failedCount)
    }
}
