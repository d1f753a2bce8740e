import Foundation
import Postgres

/// A refund request as first seen: what the store's notification says.
public struct NewRefundRequest: Sendable, Equatable {
    /// Which store asked.
    public var store: RequestingStore
    /// Apple `notificationUUID` / Google Pub/Sub `messageId`.
    public var requestId: String
    /// Apple transactionId / Google orderId.
    public var transactionId: String
    /// Apple originalTransactionId / Google purchaseToken.
    public var originalId: String?
    /// The product id.
    public var productId: String?
    /// Apple's `type` as sent; Google `subscription` or `one_time`.
    public var productType: String?
    /// Alpha-2 country of the purchase.
    public var country: String?
    /// Whether the transaction is family-shared.
    public var familyShared: Bool
    /// Why the customer asked, raw.
    public var reason: String?
    /// Google's `pendingRefundToken`.
    public var pendingToken: String?
    /// When the store asked.
    public var receivedAt: Date
    /// When the transaction was bought.
    public var purchasedAt: Date?
    /// When the customer first bought (Apple originalPurchaseDate).
    public var firstPurchasedAt: Date?
    /// Subscriptions: the end of the period.
    public var expiresAt: Date?
    /// The purchase's price in nanos (Apple `price` milliunits x 10^6; Google the order's total), when known.
    public var priceNanos: Int64?
    /// The ISO 4217 currency of ``priceNanos``, upper case.
    public var currency: String?
    /// Apple `appTransactionId`: one per customer and app, which finds the customer's other purchases.
    public var appTransactionId: String? = nil

    /// When the store stops waiting.
    public var deadline: Date { receivedAt.addingTimeInterval(store.answerWindow) }
}

/// A request still open (undecided, or decided `no_facts` / `no_consent` before its deadline).
public struct OpenRefundRequest: Sendable, Equatable {
    /// `refund_request.id`.
    public var id: Int64
    /// The request.
    public var request: NewRefundRequest
    /// When the store stops waiting.
    public var deadline: Date
    /// The rule that chose to send nothing (`no_answer`) on an earlier run, kept with the request when its deadline
    /// passes; nil when no rule chose so.
    public var withheldBy: String? = nil
    /// The body (as stored) of an earlier send that had no answer from the store (a timeout, a server error): it may
    /// have reached the store, which keeps the first answer, so it is sent again as it was, not decided afresh.
    public var unconfirmedBody: Data? = nil
}

/// The owner of `refund_request`: every statement on it is here.
public struct RefundRequestStore: Sendable {
    /// The app.
    public let appId: String

    /// Creates the store of one app's requests.
    public init(appId: String) { self.appId = appId }

    /// A send that began and never recorded its end (the process died in between) is recorded `failed`
    /// (`interrupted`), never sent again, and its usage evidence deleted with it. Runs of one app hold its job lock,
    /// so no send of another run is in flight.
    public func closeInterrupted(on connection: PostgresConnection) throws -> Int {
        // One statement, so one round trip (and atomic without a transaction of its own).
        let rows = try connection.query(
            """
            WITH closed AS (
                UPDATE refund_request SET answer = 'failed', error_code = 'interrupted', answered_at = now()
                WHERE app_id = $1 AND sending_since IS NOT NULL
                  AND (answer IS NULL OR answer IN ('no_facts', 'no_consent'))
                RETURNING id, transaction_id, original_id),
            dropped AS (
                -- A purchase token another review of the app that may still be answered names keeps its evidence,
                -- as in ConsumptionUsageEventStore.deleteUnshared (the statement sees the closed rows as they were:
                -- they are left out by id).
                DELETE FROM consumption_usage_event e
                WHERE e.purchase_id IN (SELECT transaction_id FROM closed UNION ALL SELECT original_id FROM closed)
                  AND NOT EXISTS (
                      SELECT 1 FROM refund_request o
                      WHERE o.app_id = $1 AND o.id NOT IN (SELECT id FROM closed)
                        AND (o.answer IS NULL OR (o.answer IN ('no_facts', 'no_consent') AND o.deadline > now()))
                        AND (o.transaction_id = e.purchase_id OR o.original_id = e.purchase_id)))
            SELECT count(*)::int AS n FROM closed
            """, [appId])
        return try rows[0].decode("n")
    }

    /// Has the session plan each statement once, a generic plan, rather than afresh for each of its first five runs:
    /// a run sends the same few statements dozens of times each, with one app's values of the same shape (ids,
    /// arrays of ids), and those custom plans were a fifth of the database's time in a run. A pooled connection's
    /// reset (`RESET ALL`) undoes it.
    public static func planStatementsOnce(on connection: PostgresConnection) throws {
        try connection.executeScript("SET plan_cache_mode = force_generic_plan")
    }

    /// Deletes the usage evidence of requests left without an answer whose deadline passed in the last day
    /// (`no_facts`, `no_consent`): none will be sent, so it is needed no longer (older ones, after an outage of the
    /// job, go with the nightly retention purge). A purchase id another request still open shares (a subscription's
    /// purchase token, named by a review of its next renewal) keeps its evidence.
    func dropUnneededEvidence(now: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            DELETE FROM consumption_usage_event
            WHERE purchase_id IN (
                SELECT u.purchase_id FROM refund_request r
                CROSS JOIN LATERAL unnest(ARRAY[r.transaction_id, r.original_id]) AS u(purchase_id)
                WHERE r.app_id = $1 AND r.answer IN ('no_facts', 'no_consent')
                  AND r.deadline <= $2 AND r.deadline > $2 - interval '1 day'
                  AND NOT EXISTS (
                      SELECT 1 FROM refund_request o
                      WHERE o.app_id = $1 AND o.deadline > $2 AND o.sending_since IS NULL
                        AND (o.answer IS NULL OR o.answer IN ('no_facts', 'no_consent'))
                        AND (o.transaction_id = u.purchase_id OR o.original_id = u.purchase_id)))
            """, [appId, now])
    }

    /// ``closeInterrupted(on:)`` at the start of a run (not a dry run), logged as an error when it closed any; and
    /// the usage evidence no answer will use any more dropped (``dropUnneededEvidence(now:on:)``).
    func closeInterrupted(in environment: JobEnvironment) throws {
        guard !environment.dryRun else { return }
        try dropUnneededEvidence(now: environment.now(), on: environment.connection)
        let interrupted = try closeInterrupted(on: environment.connection)
        guard interrupted > 0 else { return }
        environment.logger.error(
            "\(interrupted) answers were being sent when a run stopped; recorded failed (interrupted), not resent")
    }

    /// The open requests, nearest deadline first: undecided ones, and `no_facts` / `no_consent` ones before their
    /// deadline (past it they stay what they were).
    public func open(limit: Int, now: Date, on connection: PostgresConnection) throws -> [OpenRefundRequest] {
        try connection.query(
            """
            SELECT id, store, request_id, transaction_id, original_id, product_id, product_type, country,
                   family_shared, reason, pending_token, received_at, deadline, purchased_at, first_purchased_at,
                   expires_at, app_transaction_id, CASE WHEN preference = 'no_answer' THEN rule END AS withheld_by,
                   body_sent::text AS unconfirmed_body
            FROM refund_request
            WHERE app_id = $1 AND sending_since IS NULL
              AND (answer IS NULL OR (answer IN ('no_facts', 'no_consent') AND deadline > $3))
            ORDER BY deadline, id LIMIT $2
            """, [appId, limit, now]
        ).map { row in
            let request = NewRefundRequest(
                store: RefundRequestStore.storeValue(try row.decode("store")), requestId: try row.decode("request_id"),
                transactionId: try row.decode("transaction_id"), originalId: try row.decodeIfPresent("original_id"),
                productId: try row.decodeIfPresent("product_id"), productType: try row.decodeIfPresent("product_type"),
                country: try row.decodeIfPresent("country"), familyShared: try row.decode("family_shared"),
                reason: try row.decodeIfPresent("reason"), pendingToken: try row.decodeIfPresent("pending_token"),
                receivedAt: try row.decode("received_at"), purchasedAt: try row.decodeIfPresent("purchased_at"),
                firstPurchasedAt: try row.decodeIfPresent("first_purchased_at"),
                expiresAt: try row.decodeIfPresent("expires_at"),
                appTransactionId: try row.decodeIfPresent("app_transaction_id"))
            return OpenRefundRequest(
                id: try row.decode("id"), request: request, deadline: try row.decode("deadline"),
                withheldBy: try row.decodeIfPresent("withheld_by"),
                unconfirmedBody: try row.decodeIfPresent("unconfirmed_body", as: String.self).map { Data($0.utf8) })
        }
    }

    private static func storeValue(_ text: String) -> RequestingStore { RequestingStore(rawValue: text) ?? .apple }

    /// Earlier refunds of the customer (`original_id`) in the ledger, other than the transaction asked about.
    public func priorRefunds(originalId: String?, transactionId: String, on connection: PostgresConnection) throws
        -> Int
    {
        guard let originalId else { return 0 }
        let rows = try connection.query(
            """
            SELECT count(*)::int AS n FROM refund
            WHERE app_id = $1 AND original_id = $2 AND order_id <> $3 AND reversed_at IS NULL
            """, [appId, originalId, transactionId])
        return try rows[0].decode("n")
    }
}
