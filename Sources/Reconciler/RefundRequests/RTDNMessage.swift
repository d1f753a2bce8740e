import Foundation

/// One Real-time developer notification as the Pub/Sub subscription delivered it, read: its kind, and for a pending
/// refund review the request it makes. Pure.
public struct RTDNMessage: Sendable, Equatable {
    /// `rtdn_message.kind` (its CHECK).
    public enum Kind: String, Sendable, CaseIterable {
        case pendingRefundReview = "pending_refund_review"
        case voidedPurchase = "voided_purchase"
        case subscription
        case oneTimeProduct = "one_time_product"
        case test
        case unknown
    }

    /// The Pub/Sub message id (the same on a redelivery).
    public var messageId: String
    /// When Pub/Sub published it.
    public var publishTime: Date?
    /// What it is about.
    public var kind: Kind
    /// The decoded `DeveloperNotification` JSON (or a note of why it could not be read).
    public var notification: Data
    /// The request a pending refund review makes.
    public var request: NewRefundRequest?

    /// Reads a message's base64 `data`. A message for another package, or one that cannot be read, is `unknown`
    /// (stored, acknowledged, never answered).
    public init(messageId: String, data: String?, publishTime: String?, packageName: String) {
        self.messageId = messageId
        self.publishTime = publishTime.flatMap { try? Date($0, strategy: .iso8601) }
        let bytes = data.flatMap { Data(base64Encoded: $0) } ?? Data()
        guard let object = (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any] else {
            kind = .unknown
            notification = Data(#"{"unreadable":true}"#.utf8)
            return
        }
        notification = bytes
        let keys: [(String, Kind)] = [
            ("pendingRefundReviewNotification", .pendingRefundReview), ("voidedPurchaseNotification", .voidedPurchase),
            ("subscriptionNotification", .subscription), ("oneTimeProductNotification", .oneTimeProduct),
            ("testNotification", .test),
        ]
        guard object["packageName"] as? String == packageName,
            let found = keys.first(where: { object[$0.0] != nil })
        else {
            kind = .unknown
            return
        }
        kind = found.1
        guard kind == .pendingRefundReview,
            let review = object["pendingRefundReviewNotification"] as? [String: Any],
            let orderId = review["orderId"] as? String, !orderId.isEmpty,
            let token = review["pendingRefundToken"] as? String, !token.isEmpty
        else { return }
        let eventMillis = (object["eventTimeMillis"] as? String).flatMap(Int64.init)
        let received =
            eventMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? self.publishTime ?? Date()
        request = NewRefundRequest(
            store: .google, requestId: messageId, transactionId: orderId, originalId: nil, productId: nil,
            productType: nil, country: nil, familyShared: false, reason: review["refundReason"] as? String,
            pendingToken: token, receivedAt: received, purchasedAt: nil, firstPurchasedAt: nil, expiresAt: nil)
    }
}
