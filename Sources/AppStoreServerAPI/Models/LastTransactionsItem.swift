/// One subscription's status and its latest signed transaction and renewal info.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/lasttransactionsitem)
public struct LastTransactionsItem: Decodable, Sendable, Hashable {
    /// The subscription's status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public var status: SubscriptionStatus?
    /// The subscription's original transaction identifier.
    public var originalTransactionId: String?
    /// A JWS holding a ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?
    /// A JWS holding a ``JWSRenewalInfoDecodedPayload``.
    public var signedRenewalInfo: String?

    enum CodingKeys: String, CodingKey {
        case status, originalTransactionId, signedTransactionInfo, signedRenewalInfo
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        status = c.lenient(.status)
        originalTransactionId = c.lenientString(.originalTransactionId)
        signedTransactionInfo = c.lenientString(.signedTransactionInfo)
        signedRenewalInfo = c.lenientString(.signedRenewalInfo)
    }
}
