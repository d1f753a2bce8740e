import Foundation

/// A subscription's signed renewal information, decoded from a verified JWS. It carries no bundle identifier.
/// Decoding is lenient, as for ``JWSTransactionDecodedPayload``.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/jwsrenewalinfodecodedpayload)
public struct JWSRenewalInfoDecodedPayload: Decodable, Sendable, Hashable, SignedPayloadContent {
    /// Why the subscription expired.
    public var expirationIntent: ExpirationIntent?
    /// The identifier of the subscription's original purchase.
    public var originalTransactionId: String?
    /// The product that renews next; differs from ``productId`` when a downgrade or crossgrade is scheduled.
    public var autoRenewProductId: String?
    /// The product of the current period.
    public var productId: String?
    /// Whether the subscription renews automatically.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is trying to renew an expired subscription.
    public var isInBillingRetryPeriod: Bool?
    /// Whether the customer consented to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: Date?
    /// The type of subscription offer.
    public var offerType: OfferType?
    /// The offer's identifier.
    public var offerIdentifier: String?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// The server environment.
    public var environment: Environment?
    /// The start of the customer's most recent run of uninterrupted subscription periods.
    public var recentSubscriptionStartDate: Date?
    /// When the subscription renews next.
    public var renewalDate: Date?
    /// The ISO 4217 currency code of ``renewalPrice``.
    public var currency: String?
    /// The renewal price in milliunits of ``currency``.
    public var renewalPrice: Int64?
    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?
    /// Win-back offers the customer is eligible for.
    public var eligibleWinBackOfferIds: [String]?
    /// The UUID the app attached to the purchase; `nil` when absent or empty.
    public var appAccountToken: UUID?
    /// The app download transaction identifier.
    public var appTransactionId: String?
    /// The duration of the offer (ISO 8601 period).
    public var offerPeriod: String?

    enum CodingKeys: String, CodingKey {
        case expirationIntent, originalTransactionId, autoRenewProductId, productId, autoRenewStatus
        case isInBillingRetryPeriod, priceIncreaseStatus, gracePeriodExpiresDate, offerType, offerIdentifier
        case signedDate, environment, recentSubscriptionStartDate, renewalDate, currency, renewalPrice
        case offerDiscountType, eligibleWinBackOfferIds, appAccountToken, appTransactionId, offerPeriod
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        expirationIntent = c.lenient(.expirationIntent)
        originalTransactionId = c.lenientString(.originalTransactionId)
        autoRenewProductId = c.lenientString(.autoRenewProductId)
        productId = c.lenientString(.productId)
        autoRenewStatus = c.lenient(.autoRenewStatus)
        isInBillingRetryPeriod = c.lenientBool(.isInBillingRetryPeriod)
        priceIncreaseStatus = c.lenient(.priceIncreaseStatus)
        gracePeriodExpiresDate = c.lenientDate(.gracePeriodExpiresDate)
        offerType = c.lenient(.offerType)
        offerIdentifier = c.lenientString(.offerIdentifier)
        signedDate = c.lenientDate(.signedDate)
        environment = c.lenient(.environment)
        recentSubscriptionStartDate = c.lenientDate(.recentSubscriptionStartDate)
        renewalDate = c.lenientDate(.renewalDate)
        currency = c.lenientString(.currency)
        renewalPrice = c.lenientInt64(.renewalPrice)
        offerDiscountType = c.lenient(.offerDiscountType)
        eligibleWinBackOfferIds = c.lenientStrings(.eligibleWinBackOfferIds)
        appAccountToken = c.lenientUUID(.appAccountToken)
        appTransactionId = c.lenientString(.appTransactionId)
        offerPeriod = c.lenientString(.offerPeriod)
    }
}
