import Foundation

/// A transaction's signed information, decoded from a verified JWS. Every field is optional: Apple adds, omits and
/// renames fields over time, and decoding is lenient (an unexpected value becomes `nil`; the raw JSON is kept in
/// ``VerifiedPayload/json``).
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/jwstransactiondecodedpayload)
public struct JWSTransactionDecodedPayload: Decodable, Sendable, Hashable, SignedPayloadContent {
    /// The transaction's own identifier (one per purchase, renewal or restore).
    public var transactionId: String?
    /// The identifier of the original purchase; shared by every renewal of one subscription.
    public var originalTransactionId: String?
    /// The identifier of a subscription purchase event across devices.
    public var webOrderLineItemId: String?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The product identifier.
    public var productId: String?
    /// The subscription group the product belongs to.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer (or the renewal happened).
    public var purchaseDate: Date?
    /// The purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// When the subscription expires or renews.
    public var expiresDate: Date?
    /// How many items were bought.
    public var quantity: Int?
    /// The type of in-app purchase.
    public var type: ProductType?
    /// The UUID the app attached to the purchase; `nil` when absent or empty.
    public var appAccountToken: UUID?
    /// Bought, or shared through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// Why the transaction was refunded or revoked.
    public var revocationReason: RevocationReason?
    /// When the transaction was refunded or revoked.
    public var revocationDate: Date?
    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?
    /// The type of subscription offer.
    public var offerType: OfferType?
    /// The offer's identifier.
    public var offerIdentifier: String?
    /// The server environment.
    public var environment: Environment?
    /// The three-letter code of the App Store storefront.
    public var storefront: String?
    /// Apple's identifier of the storefront.
    public var storefrontId: String?
    /// Purchase or renewal.
    public var transactionReason: TransactionReason?
    /// The ISO 4217 currency code of ``price``.
    public var currency: String?
    /// The store-reported price in milliunits of ``currency`` (10990 = 10.99). Not the source of record for revenue.
    public var price: Int64?
    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?
    /// The app download transaction identifier.
    public var appTransactionId: String?
    /// The duration of the offer (ISO 8601 period).
    public var offerPeriod: String?
    /// Full or prorated refund, or Family Sharing revoke.
    public var revocationType: RevocationType?
    /// The refunded share in milliunits (50000 = 50 %), for prorated refunds.
    public var revocationPercentage: Int?

    enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, webOrderLineItemId, bundleId, productId
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity, type
        case appAccountToken, inAppOwnershipType, signedDate, revocationReason, revocationDate, isUpgraded
        case offerType, offerIdentifier, environment, storefront, storefrontId, transactionReason, currency, price
        case offerDiscountType, appTransactionId, offerPeriod, revocationType, revocationPercentage
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        transactionId = c.lenientString(.transactionId)
        originalTransactionId = c.lenientString(.originalTransactionId)
        webOrderLineItemId = c.lenientString(.webOrderLineItemId)
        bundleId = c.lenientString(.bundleId)
        productId = c.lenientString(.productId)
        subscriptionGroupIdentifier = c.lenientString(.subscriptionGroupIdentifier)
        purchaseDate = c.lenientDate(.purchaseDate)
        originalPurchaseDate = c.lenientDate(.originalPurchaseDate)
        expiresDate = c.lenientDate(.expiresDate)
        quantity = c.lenientInt(.quantity)
        type = c.lenient(.type)
        appAccountToken = c.lenientUUID(.appAccountToken)
        inAppOwnershipType = c.lenient(.inAppOwnershipType)
        signedDate = c.lenientDate(.signedDate)
        revocationReason = c.lenient(.revocationReason)
        revocationDate = c.lenientDate(.revocationDate)
        isUpgraded = c.lenientBool(.isUpgraded)
        offerType = c.lenient(.offerType)
        offerIdentifier = c.lenientString(.offerIdentifier)
        environment = c.lenient(.environment)
        storefront = c.lenientString(.storefront)
        storefrontId = c.lenientString(.storefrontId)
        transactionReason = c.lenient(.transactionReason)
        currency = c.lenientString(.currency)
        price = c.lenientInt64(.price)
        offerDiscountType = c.lenient(.offerDiscountType)
        appTransactionId = c.lenientString(.appTransactionId)
        offerPeriod = c.lenientString(.offerPeriod)
        revocationType = c.lenient(.revocationType)
        revocationPercentage = c.lenientInt(.revocationPercentage)
    }
}
