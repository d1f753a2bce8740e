import Foundation

/// A purchase that was canceled, refunded or charged back, as `purchases.voidedpurchases.list` returns it.
///
/// With `type=1` several rows share one ``purchaseToken`` (subscription renewals): ``orderId`` names the order.
/// With `includeQuantityBasedPartialRefund=true` one purchase may yield several rows, each with ``voidedQuantity``.
/// See [VoidedPurchase](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases#VoidedPurchase).
public struct VoidedPurchase: Sendable, Equatable, Codable {
    /// `androidpublisher#voidedPurchase`.
    public var kind: String?
    /// The token of the one-time purchase or subscription.
    public var purchaseToken: String
    /// The order id (unique per one-time purchase, subscription purchase or renewal).
    public var orderId: String?
    /// When the purchase was made, in milliseconds since the epoch (sent as a JSON string; numbers are accepted).
    public var purchaseTimeMillis: Int64?
    /// When the purchase was voided, in milliseconds since the epoch. Not the time Google *recorded* the void,
    /// which is what the request's `startTime`/`endTime` filter on: never use it as a sync cursor.
    public var voidedTimeMillis: Int64
    /// Who voided it.
    public var voidedSource: VoidedSource?
    /// Why it was voided.
    public var voidedReason: VoidedReason?
    /// For a quantity-based partial refund: how many items this row voids.
    public var voidedQuantity: Int32?
    /// The row's JSON object exactly as Google sent it (for the ledger's `jsonb` payload). Filled by
    /// ``VoidedPurchasesListResponse/init(json:)``; empty when a row is decoded on its own.
    public var rawJSON: Data

    /// Creates a row.
    public init(
        kind: String? = "androidpublisher#voidedPurchase", purchaseToken: String, orderId: String?,
        purchaseTimeMillis: Int64?, voidedTimeMillis: Int64, voidedSource: VoidedSource?,
        voidedReason: VoidedReason?, voidedQuantity: Int32? = nil, rawJSON: Data = Data()
    ) {
        self.kind = kind
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.purchaseTimeMillis = purchaseTimeMillis
        self.voidedTimeMillis = voidedTimeMillis
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
        self.voidedQuantity = voidedQuantity
        self.rawJSON = rawJSON
    }

    enum CodingKeys: String, CodingKey {
        case kind, purchaseToken, orderId, purchaseTimeMillis, voidedTimeMillis, voidedSource, voidedReason
        case voidedQuantity
    }

    /// Decodes Google's JSON, accepting int64 fields as strings or numbers and codes as numbers or strings.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decodeIfPresent(String.self, forKey: .kind)
        purchaseToken = try container.decode(String.self, forKey: .purchaseToken)
        orderId = try container.decodeIfPresent(String.self, forKey: .orderId)
        purchaseTimeMillis = try container.decodeFlexibleInt64IfPresent(forKey: .purchaseTimeMillis)
        voidedTimeMillis = try container.decodeFlexibleInt64(forKey: .voidedTimeMillis)
        voidedSource = try container.decodeIfPresent(VoidedSource.self, forKey: .voidedSource)
        voidedReason = try container.decodeIfPresent(VoidedReason.self, forKey: .voidedReason)
        voidedQuantity = try container.decodeFlexibleInt32IfPresent(forKey: .voidedQuantity)
        rawJSON = Data()
    }

    /// Encodes Google's shape (int64 fields as strings), without ``rawJSON``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(kind, forKey: .kind)
        try container.encode(purchaseToken, forKey: .purchaseToken)
        try container.encodeIfPresent(orderId, forKey: .orderId)
        try container.encodeIfPresent(purchaseTimeMillis.map(String.init), forKey: .purchaseTimeMillis)
        try container.encode(String(voidedTimeMillis), forKey: .voidedTimeMillis)
        try container.encodeIfPresent(voidedSource, forKey: .voidedSource)
        try container.encodeIfPresent(voidedReason, forKey: .voidedReason)
        try container.encodeIfPresent(voidedQuantity, forKey: .voidedQuantity)
    }
}
