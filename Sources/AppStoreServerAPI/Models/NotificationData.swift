/// The app-specific part of a notification: which app, which environment, and the signed transaction and renewal info.
/// The two signed fields are JWS of their own: verify them with ``SignedPayloadVerifier``.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/data)
public struct NotificationData: Decodable, Sendable, Hashable {
    /// The server environment.
    public var environment: Environment?
    /// The app's Apple ID (checked against the configured one in production).
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's build version.
    public var bundleVersion: String?
    /// A JWS holding a ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?
    /// A JWS holding a ``JWSRenewalInfoDecodedPayload``.
    public var signedRenewalInfo: String?
    /// The subscription's status, for subscription notifications.
    public var status: SubscriptionStatus?
    /// `CONSUMPTION_REQUEST`: why the customer asked for a refund (`UNINTENDED_PURCHASE`, `FULFILLMENT_ISSUE`,
    /// `UNSATISFIED_WITH_PURCHASE`, `LEGAL`, `OTHER`), raw.
    public var consumptionRequestReason: String?

    enum CodingKeys: String, CodingKey {
        case environment, appAppleId, bundleId, bundleVersion, signedTransactionInfo, signedRenewalInfo, status
        case consumptionRequestReason
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        environment = c.lenient(.environment)
        appAppleId = c.lenientInt64(.appAppleId)
        bundleId = c.lenientString(.bundleId)
        bundleVersion = c.lenientString(.bundleVersion)
        signedTransactionInfo = c.lenientString(.signedTransactionInfo)
        signedRenewalInfo = c.lenientString(.signedRenewalInfo)
        status = c.lenient(.status)
        consumptionRequestReason = c.lenientString(.consumptionRequestReason)
    }
}
