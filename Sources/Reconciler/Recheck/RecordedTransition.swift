import Foundation
import Postgres

/// One status change the recheck job recorded (or, with `--dry-run`, would record).
public struct RecordedTransition: Sendable, Equatable {
    /// `subscription.id` (0 for a row a dry run would create).
    public var subscriptionId: Int64
    /// Apple originalTransactionId / Google purchaseToken.
    public var storeId: String
    /// The state before.
    public var oldState: LifecycleState
    /// The state after.
    public var newState: LifecycleState
    /// The classification.
    public var kind: TransitionKind
    /// The expiry before and after.
    public var oldExpiresAt: Date?
    /// The expiry after.
    public var newExpiresAt: Date?
    /// The product before and after.
    public var oldProductId: String?
    /// The product after.
    public var newProductId: String?
    /// The transaction or order behind it.
    public var orderId: String?

    /// One line for logs and `--dry-run`: `app store-id old → new (kind), expiry, product`. Google tokens are cut
    /// to a prefix (they are bearer-like secrets).
    public func line(app: String) -> String {
        var text = "\(app) \(Self.shortId(storeId)) \(oldState.rawValue) -> \(newState.rawValue) (\(kind.rawValue))"
        if !TransitionClassifier.sameInstant(oldExpiresAt, newExpiresAt) {
            text += " expires \(Self.text(oldExpiresAt)) -> \(Self.text(newExpiresAt))"
        }
        if let newProductId, oldProductId != newProductId {
            text += " product \(oldProductId ?? "-") -> \(newProductId)"
        }
        return text
    }

    /// A store id safe to log: Apple ids whole, long Google tokens as their first 12 characters.
    public static func shortId(_ storeId: String) -> String {
        storeId.count > 24 ? String(storeId.prefix(12)) + "…" : storeId
    }

    private static func text(_ date: Date?) -> String {
        guard let date else { return "-" }
        return PostgresTimestamp.millis(date)
    }
}
