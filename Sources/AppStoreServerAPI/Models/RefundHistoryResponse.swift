/// One page of a customer's refunded transactions (Get Refund History v2): at most 20, ascending by revocation date.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/refundhistoryresponse)
public struct RefundHistoryResponse: Decodable, Sendable, Hashable {
    /// JWS, each a ``JWSTransactionDecodedPayload``; empty when absent.
    public var signedTransactions: [String]
    /// Items of the list that could not be read (left out of it): the job logs and counts them.
    public var unreadableItems = 0
    /// The token for the next page, and after the last page the one to store for "only what is new since".
    public var revision: String?
    /// Whether another page follows; `false` when absent.
    public var hasMore: Bool

    enum CodingKeys: String, CodingKey {
        case signedTransactions, revision, hasMore
    }

    /// Decodes leniently, but a list or `hasMore` that is not one fails the page.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        (signedTransactions, unreadableItems) = try c.pageList(.signedTransactions)
        revision = c.lenientString(.revision)
        hasMore = try c.pageFlag(.hasMore)
    }
}
