import Foundation
import Ledger
import Postgres

/// Subscriptions a store said changed, queued for the next recheck whatever their expiry (`recheck_request`, its only
/// SQL). A Google `subscriptionNotification` queues its token (``queue(_:on:)``); the recheck lists the queued
/// subscriptions with the near-expiry ones (``RecheckPlanner``), and deletes a request in the transaction that writes
/// the answer (``clear(app:storeId:after:askedAt:on:)``). A token storerecon does not know yet is added to `subscription`
/// first (``adoptUnknown(app:on:)``), so that the recheck asks about it and it becomes known.
public enum RecheckRequests {
    /// One request.
    public struct Request: Sendable, Equatable {
        /// The app.
        public var app: String
        /// `google` or `apple`.
        public var platform: String
        /// `subscription.store_id`: Google purchase token, Apple original transaction id.
        public var storeId: String
        /// The product, for a token not known yet.
        public var productId: String?
        /// Why (the notification that asked).
        public var reason: String
        /// When it was asked.
        public var requestedAt: Date

        /// A request of these fields.
        public init(
            app: String, platform: String, storeId: String, productId: String?, reason: String, requestedAt: Date
        ) {
            self.app = app
            self.platform = platform
            self.storeId = storeId
            self.productId = productId
            self.reason = reason
            self.requestedAt = requestedAt
        }
    }

    /// Queues a subscription (a request already waiting keeps the later time and the latest reason).
    public static func queue(_ request: Request, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO recheck_request (app_id, platform, purchase_id, product_id, reason, requested_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (app_id, purchase_id) DO UPDATE SET
                product_id = coalesce(EXCLUDED.product_id, recheck_request.product_id),
                reason = EXCLUDED.reason,
                requested_at = greatest(recheck_request.requested_at, EXCLUDED.requested_at)
            """,
            [
                request.app, request.platform, request.storeId, request.productId, request.reason,
                request.requestedAt,
            ])
    }

    /// Adds the queued tokens storerecon does not know to `subscription`, through its one writer
    /// (``SubscriptionLedger/adoptQueued(app:on:)``). Returns (added, waiting without a product).
    public static func adoptUnknown(app: String, on connection: PostgresConnection) throws -> (Int, Int) {
        try SubscriptionLedger.adoptQueued(app: app, on: connection)
    }

    /// After a store's answer, in the transaction that writes it: deletes the subscription's request made before the
    /// store was asked (a later one stays for the next run). An unusable answer, or one in a state storerecon does not
    /// know, clears nothing (asked again next run): a token first known from a notification has no expiry, so its
    /// request is all that has it asked.
    static func clear(
        app: String, storeId: String, after reading: StatusReading, askedAt: Date, on connection: PostgresConnection
    ) throws {
        switch reading {
        case .badAnswer, .unknownState: return
        case .observed, .missing: break
        }
        try connection.execute(
            "DELETE FROM recheck_request WHERE app_id = $1 AND purchase_id = $2 AND requested_at <= $3",
            [app, storeId, askedAt])
    }

    /// The planner's part for queued subscriptions ($1 the app), in the shape of ``RecheckPlanner/dueSQL``'s parts.
    static let dueSQL = """
        SELECT s.id, (extract(epoch FROM s.last_checked_at) * 1000000)::bigint AS seen_us
        FROM recheck_request q
        -- A probe by key per request (OFFSET 0 keeps the planner from making it a join over the app's rows).
        CROSS JOIN LATERAL (
            SELECT id, last_checked_at FROM subscription WHERE app_id = $1 AND store_id = q.purchase_id OFFSET 0
        ) s
        WHERE q.app_id = $1
        """
}
