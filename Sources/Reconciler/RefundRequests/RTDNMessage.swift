import Foundation
import Ledger
import PlayDeveloperAPI

/// One Real-time developer notification as the Pub/Sub subscription delivered it, read: its kind, and what it asks
/// of storerecon (a pending refund review's request, a voided purchase to record, a subscription to recheck). Pure.
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
    /// The decoded `DeveloperNotification` JSON; for one `jsonb` cannot hold, or that could not be read, a JSON
    /// object saying why with the message's `data` in base64, so nothing Google sent is lost.
    public var notification: Data
    /// Why the message is `unknown` (for the log), nil when it is not.
    public var unknownBecause: String?
    /// The request a pending refund review makes.
    public var request: NewRefundRequest?
    /// What a `voidedPurchaseNotification` says.
    public var voided: RefundRecord.VoidedNotice?
    /// What a `subscriptionNotification` says.
    public var subscriptionChange: SubscriptionNotice?

    /// Reads a message's base64 `data`. A message for another package, or one that cannot be read, is `unknown`
    /// (stored, acknowledged, never answered; ``unknownBecause`` says why).
    public init(messageId: String, data: String?, publishTime: String?, packageName: String) {
        self.messageId = messageId
        // RFC 3339 with fractional seconds (`2026-11-28T10:00:00.749Z`), as Pub/Sub writes it.
        self.publishTime = publishTime.flatMap { RFC3339Timestamp($0)?.date }
        let bytes = data.flatMap { Data(base64Encoded: $0) } ?? Data()
        guard let object = (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any] else {
            kind = .unknown
            unknownBecause = "its data is not a base64 JSON object"
            notification = Self.kept(Data((data ?? "").utf8), because: "unreadable")
            return
        }
        // An escape `jsonb` refuses (NUL, a lone surrogate) in a field the app sets (an obfuscated account id) must
        // not fail the pull's transaction, which would leave every message of it unacknowledged, run after run.
        notification =
            LedgerLimits.unstorableEscape(in: bytes).map { Self.kept(bytes, because: "unstorable: \($0)") } ?? bytes
        let keys: [(String, Kind)] = [
            ("pendingRefundReviewNotification", .pendingRefundReview), ("voidedPurchaseNotification", .voidedPurchase),
            ("subscriptionNotification", .subscription), ("oneTimeProductNotification", .oneTimeProduct),
            ("testNotification", .test),
        ]
        let package = object["packageName"] as? String
        guard package == packageName, let found = keys.first(where: { object[$0.0] != nil }) else {
            kind = .unknown
            unknownBecause =
                package == packageName
                ? "it holds no notification storerecon knows"
                : "it is for package \(package.map { "\"\($0)\"" } ?? "(none)"), not \"\(packageName)\""
            return
        }
        kind = found.1
        let eventMillis = Self.integer(object["eventTimeMillis"]).map(Int64.init)
        let body = object[found.0] as? [String: Any] ?? [:]
        switch kind {
        case .pendingRefundReview:
            let received = eventMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? self.publishTime
            request = Self.review(body, messageId: messageId, receivedAt: received ?? Date())
            // The notification is the review's only source of its token: one that cannot be answered is said.
            if request == nil { unknownBecause = Self.unanswerableReview }
        case .voidedPurchase:
            voided = RefundRecord.VoidedNotice(
                purchaseToken: Self.text(body["purchaseToken"]), orderId: Self.text(body["orderId"]),
                productType: Self.integer(body["productType"]), refundType: Self.integer(body["refundType"]),
                eventMillis: eventMillis)
        case .subscription:
            // The token is the recheck queue's key: one too long for its index is said, not queued.
            subscriptionChange = Self.text(body["purchaseToken"]).map { token in
                SubscriptionNotice(
                    purchaseToken: token, notificationType: Self.integer(body["notificationType"]),
                    subscriptionId: Self.text(body["subscriptionId"]))
            }
            if let token = subscriptionChange?.purchaseToken, token.utf8.count > LedgerLimits.maxKeyBytes {
                subscriptionChange = nil
                unknownBecause =
                    "its purchaseToken is longer than \(LedgerLimits.maxKeyBytes) bytes: not queued for recheck"
            }
        case .oneTimeProduct, .test, .unknown: break
        }
    }

    static let unanswerableReview =
        "a pending refund review without an orderId and pendingRefundToken storerecon can store: it cannot be answered"

    /// A JSON object saying why a message's content is not stored as it came, with that content in base64.
    static func kept(_ content: Data, because reason: String) -> Data {
        let object = ["not_stored_as_sent": reason, "data_base64": content.base64EncodedString()]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    }

    /// The request of a `pendingRefundReviewNotification`, when it names its order and token.
    static func review(_ body: [String: Any], messageId: String, receivedAt: Date) -> NewRefundRequest? {
        // An order id longer than the ledger takes would not fit its index: the whole pull would fail.
        guard let orderId = text(body["orderId"]), orderId.count <= LedgerLimits.maxOrderIdLength,
            let token = text(body["pendingRefundToken"]), token.count <= LedgerLimits.maxTokenLength
        else { return nil }
        return NewRefundRequest(
            store: .google, requestId: messageId, transactionId: orderId, originalId: nil, productId: nil,
            productType: nil, country: nil, familyShared: false, reason: text(body["refundReason"]),
            pendingToken: token, receivedAt: receivedAt, purchasedAt: nil, firstPurchasedAt: nil, expiresAt: nil)
    }

    /// A JSON string PostgreSQL's `text` can hold (no NUL), not empty; nil otherwise, so that one odd field never
    /// fails the pull's transaction (every message of it would stay unacknowledged, run after run).
    static func text(_ value: Any?) -> String? {
        guard let text = value as? String, !text.isEmpty, !text.utf8.contains(0) else { return nil }
        return text
    }

    /// A JSON integer, sent as a number or as a string of digits (Google sends int64 values as strings).
    static func integer(_ value: Any?) -> Int? {
        switch value {
        case let number as NSNumber: Int(exactly: number.doubleValue)
        case let text as String: Int(text)
        default: nil
        }
    }
}

/// What a Google `subscriptionNotification` says: the subscription to recheck.
public struct SubscriptionNotice: Sendable, Equatable {
    /// The subscription's purchase token (`subscription.store_id`).
    public var purchaseToken: String
    /// Google's `notificationType` (4 purchased, 2 renewed, 3 canceled, 13 expired, ...).
    public var notificationType: Int?
    /// The product (`subscriptionId`), for a token storerecon does not know yet.
    public var subscriptionId: String?
}
