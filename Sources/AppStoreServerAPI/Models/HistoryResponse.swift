/// One page of a customer's transactions (Get Transaction History v2), refunded and revoked ones included.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/historyresponse)
public struct HistoryResponse: Decodable, Sendable, Hashable {
    /// The token for the next page.
    public var revision: String?
    /// Whether another page follows; `false` when absent.
    public var hasMore: Bool
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's Apple ID; `nil` when absent or malformed.
    public var appAppleId: Int64?
    /// The server environment.
    public var environment: Environment?
    /// JWS, each a ``JWSTransactionDecodedPayload``; empty when absent.
    public var signedTransactions: [String]
    /// Items of the list that could not be read (left out of it): the job logs and counts them.
    public var unreadableItems = 0

    enum CodingKeys: String, CodingKey {
        case revision, hasMore, bundleId, appAppleId, environment, signedTransactions
    }

    /// Decodes leniently, but a list or `hasMore` that is not one fails the page.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        revision = c.lenientString(.revision)
        hasMore = try c.pageFlag(.hasMore)
        bundleId = c.lenientString(.bundleId)
        appAppleId = c.lenientInt64(.appAppleId)
        environment = c.lenient(.environment)
        (signedTransactions, unreadableItems) = try c.pageList(.signedTransactions)
    }
}
