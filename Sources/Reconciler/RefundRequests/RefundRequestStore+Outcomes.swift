import Foundation
import Postgres

/// A Google request whose order is to be read: for its product, country and price, or for Google's decision.
struct GoogleOrderToRead: Sendable, Equatable {
    /// `refund_request.id`.
    var id: Int64
    /// The order id.
    var orderId: String
    /// The answer deadline.
    var deadline: Date
}

extension RefundRequestStore {
    /// Google requests still open whose order was never read, nearest deadline first. Those whose order is in
    /// `google_order` are described from it first (no call).
    func ordersToDescribe(limit: Int, now: Date, on connection: PostgresConnection) throws -> [GoogleOrderToRead] {
        try connection.execute(
            """
            UPDATE refund_request q
            SET product_id = coalesce(q.product_id, g.product_id), country = coalesce(q.country, g.buyer_country),
                price_nanos = coalesce(q.price_nanos, g.total_nanos),
                currency = coalesce(q.currency, upper(g.currency)), order_read_at = now()
            FROM google_order g
            WHERE q.app_id = $1 AND q.store = 'google' AND q.order_read_at IS NULL
              AND g.app_id = q.app_id AND g.order_id = q.transaction_id AND g.status = 'ok'
            """, [appId])
        return try toRead(
            "order_read_at IS NULL AND sending_since IS NULL AND deadline > $3"
                + " AND (answer IS NULL OR answer IN ('no_facts', 'no_consent'))", limit: limit, at: now,
            on: connection)
    }

    /// Google requests whose review ended before `reviewEndedBy` without a decision (none, or `pending`), oldest
    /// first, once those the ledger shows refunded (a void of the order by the review's end) are decided so.
    func reviewsEnded(reviewEndedBy: Date, limit: Int, on connection: PostgresConnection) throws
        -> [GoogleOrderToRead]
    {
        let cutoff = reviewEndedBy.addingTimeInterval(-GoogleReviewPeriod.settle)
        try connection.execute(
            """
            WITH ended AS (
                SELECT q.id, (
                    SELECT min(r.refunded_at) FROM refund r
                    WHERE r.app_id = q.app_id AND r.order_id = q.transaction_id AND r.reversed_at IS NULL
                      AND r.refund_type <> 'family_revoke'
                      AND r.refunded_at <= q.deadline + $3::float8 * interval '1 second'
                ) AS refunded_at
                FROM refund_request q
                WHERE q.app_id = $1 AND q.store = 'google' AND (q.decision IS NULL OR q.decision = 'pending')
                  AND q.deadline <= $2
            )
            UPDATE refund_request q SET decision = 'refunded', decided_at = ended.refunded_at
            FROM ended WHERE q.id = ended.id AND ended.refunded_at IS NOT NULL
            """, [appId, cutoff, GoogleReviewPeriod.settle])
        return try toRead(
            "(decision IS NULL OR decision = 'pending') AND deadline <= $3", limit: limit, at: cutoff, on: connection)
    }

    private func toRead(_ condition: String, limit: Int, at: Date, on connection: PostgresConnection) throws
        -> [GoogleOrderToRead]
    {
        try connection.query(
            """
            SELECT id, transaction_id, deadline FROM refund_request
            WHERE app_id = $1 AND store = 'google' AND \(condition)
            ORDER BY deadline, id LIMIT $2
            """, [appId, limit, at]
        ).map {
            GoogleOrderToRead(
                id: try $0.decode("id"), orderId: try $0.decode("transaction_id"), deadline: try $0.decode("deadline"))
        }
    }

    /// Records what the order says of the purchase (what the request did not say already); `nil` when Google does
    /// not know the order: it is not asked again.
    func describe(id: Int64, with order: GoogleReviewOrder?, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE refund_request SET product_id = coalesce(product_id, $2), country = coalesce(country, $3),
                   product_type = coalesce(product_type, $4), original_id = coalesce(original_id, $5),
                   price_nanos = coalesce(price_nanos, $6), currency = coalesce(currency, $7),
                   purchased_at = coalesce(purchased_at, $8), expires_at = coalesce(expires_at, $9),
                   order_read_at = now()
            WHERE id = $1
            """,
            [
                id, order?.productId, order?.country, order?.productType, order?.purchaseToken, order?.priceNanos,
                order?.currency, order?.purchasedAt, order?.expiresAt,
            ])
    }

    /// Records Google's decision on an ended review (unless one was recorded meanwhile).
    func decide(id: Int64, _ decision: RefundRequestDecision, at: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE refund_request SET decision = $2, decided_at = $3
            WHERE id = $1 AND (decision IS NULL OR decision = 'pending')
            """, [id, decision.rawValue, at])
    }

    /// Apple: a request whose transaction the ledger shows refunded since the request (a `REFUND` this job did not
    /// see, read by the refund sync) is `refunded`, as the notification would have made it.
    @discardableResult
    func appleOutcomesFromLedger(on connection: PostgresConnection) throws -> Int {
        try connection.execute(
            """
            WITH refunded AS (
                SELECT q.id, f.refunded_at, f.percentage_milli
                FROM refund_request q
                CROSS JOIN LATERAL (
                    SELECT min(r.refunded_at) AS refunded_at, max(r.percentage_milli) AS percentage_milli
                    FROM refund r
                    WHERE r.app_id = q.app_id AND r.order_id = q.transaction_id AND r.reversed_at IS NULL
                      AND r.refund_type <> 'family_revoke' AND r.refunded_at >= q.received_at
                ) f
                WHERE q.app_id = $1 AND q.store = 'apple' AND (q.decision IS NULL OR q.decision = 'pending')
                  AND f.refunded_at IS NOT NULL
            )
            UPDATE refund_request q SET decision = 'refunded', decided_at = refunded.refunded_at,
                   revocation_milli = coalesce(q.revocation_milli, refunded.percentage_milli)
            FROM refunded WHERE q.id = refunded.id
            """, [appId])
    }
}
