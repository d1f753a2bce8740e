import Foundation
import PlayDeveloperAPI
import Postgres

/// A Google request whose order is to be read: for its product, country and price, or for Google's decision.
struct GoogleOrderToRead: Sendable, Equatable {
    /// `refund_request.id`.
    var id: Int64
    /// The order id.
    var orderId: String
    /// The answer deadline.
    var deadline: Date
    /// When Google asked about the same order again, if it did (a refund from then on is that review's).
    var askedAgainAt: Date? = nil
}

extension RefundRequestStore {
    /// SQL: whether another request about the transaction of the request `q` came after it and by `before` (a
    /// refund at `before` then answers that one, not `q`: one refund is one request's outcome).
    static func askedAgain(before: String) -> String {
        """
        EXISTS (
            SELECT 1 FROM refund_request later
            WHERE later.app_id = q.app_id AND later.transaction_id = q.transaction_id
              AND later.received_at > q.received_at AND later.received_at <= \(before))
        """
    }

    /// Google requests still open whose order was never read, nearest deadline first.
    func ordersToDescribe(limit: Int, now: Date, on connection: PostgresConnection) throws -> [GoogleOrderToRead] {
        try toRead(
            "order_read_at IS NULL AND sending_since IS NULL AND deadline > $3"
                + " AND (answer IS NULL OR answer IN ('no_facts', 'no_consent'))", limit: limit, at: now,
            on: connection)
    }

    /// The orders among `orderIds` that the ledger has read already (`google_order`), as Google sent them: they need
    /// no call. A stored order that no longer decodes is left out (read again from Google).
    func storedOrders(_ orderIds: [String], on connection: PostgresConnection) throws -> [String: GoogleReviewOrder] {
        guard !orderIds.isEmpty else { return [:] }
        let rows = try connection.query(
            """
            SELECT payload::text AS payload FROM google_order
            WHERE app_id = $1 AND order_id = ANY ($2::text[]) AND status = 'ok' AND payload IS NOT NULL
            """, [appId, PostgresTextArray(orderIds)])
        var found: [String: GoogleReviewOrder] = [:]
        let decoder = JSONDecoder()
        for row in rows {
            let text: String = try row.decode("payload")
            guard let order = try? decoder.decode(PlayOrder.self, from: Data(text.utf8)) else { continue }
            found[order.orderId] = GoogleReviewOrder(order)
        }
        return found
    }

    /// Google requests whose review ended before `reviewEndedBy` without a decision (none, or `pending`), oldest
    /// first, once those the ledger shows refunded (a void of the order by the review's end) are decided so. One
    /// whose order Google did not know (``unknownOrders(_:at:on:)``) is asked again a day later, not every run.
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
                      AND r.refunded_at >= q.received_at
                      AND r.refunded_at <= q.deadline + $3::float8 * interval '1 second'
                      AND NOT \(RefundRequestStore.askedAgain(before: "r.refunded_at"))
                ) AS refunded_at
                FROM refund_request q
                WHERE q.app_id = $1 AND q.store = 'google' AND (q.decision IS NULL OR q.decision = 'pending')
                  AND q.deadline <= $2
            )
            UPDATE refund_request q SET decision = 'refunded', decided_at = ended.refunded_at
            -- `= ANY` as well: the rows by their primary key, not a scan of every request joined to the list.
            FROM ended WHERE q.id = ANY (ARRAY(SELECT id FROM ended WHERE refunded_at IS NOT NULL))
              AND q.id = ended.id AND ended.refunded_at IS NOT NULL
            """, [appId, cutoff, GoogleReviewPeriod.settle])
        return try toRead(
            "(decision IS NULL OR decision = 'pending') AND deadline <= $3 AND (decided_at IS NULL OR decided_at <= $3)",
            limit: limit, at: cutoff, askedAgain: true, on: connection)
    }

    /// Records that Google did not know the orders of the ended reviews `ids` at `at` (`decided_at` without a
    /// decision): ``reviewsEnded(reviewEndedBy:limit:on:)`` leaves them for a day, so they neither cost Orders calls
    /// every run nor hold back the reviews that end after them.
    func unknownOrders(_ ids: [Int64], at: Date, on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.execute(
            """
            UPDATE refund_request SET decided_at = $2
            WHERE id = ANY ($1::bigint[]) AND (decision IS NULL OR decision = 'pending')
            """, [PostgresArray(ids), at])
    }

    /// The Google requests `condition` selects, nearest deadline first; with `askedAgain`, when Google asked about
    /// each one's order again (what an ended review's decision needs; describing an order does not).
    private func toRead(
        _ condition: String, limit: Int, at: Date, askedAgain: Bool = false, on connection: PostgresConnection
    ) throws -> [GoogleOrderToRead] {
        let askedAgainAt =
            askedAgain
            ? """
            (SELECT min(later.received_at) FROM refund_request later
             WHERE later.app_id = q.app_id AND later.transaction_id = q.transaction_id
               AND later.received_at > q.received_at)
            """ : "NULL::timestamptz"
        return try connection.query(
            """
            SELECT id, transaction_id, deadline, \(askedAgainAt) AS asked_again_at
            FROM refund_request q
            WHERE app_id = $1 AND store = 'google' AND \(condition)
            ORDER BY deadline, id LIMIT $2
            """, [appId, limit, at]
        ).map {
            GoogleOrderToRead(
                id: try $0.decode("id"), orderId: try $0.decode("transaction_id"), deadline: try $0.decode("deadline"),
                askedAgainAt: try $0.decodeIfPresent("asked_again_at"))
        }
    }

    /// Records what each order says of its purchase (what the request did not say already), in one statement; an
    /// order `nil` is one Google does not know: it is not asked again.
    func describe(_ described: [(id: Int64, order: GoogleReviewOrder?)], on connection: PostgresConnection) throws {
        guard !described.isEmpty else { return }
        let orders = described.map(\.order)
        try connection.execute(
            """
            UPDATE refund_request q
            SET product_id = coalesce(q.product_id, o.product_id), country = coalesce(q.country, o.country),
                product_type = coalesce(q.product_type, o.product_type),
                original_id = coalesce(q.original_id, o.purchase_token),
                price_nanos = coalesce(q.price_nanos, o.price_nanos), currency = coalesce(q.currency, o.currency),
                purchased_at = coalesce(q.purchased_at, o.purchased_at),
                expires_at = coalesce(q.expires_at, o.expires_at),
                first_purchased_at = coalesce(q.first_purchased_at, o.first_purchased_at), order_read_at = now()
            FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[],
                        $8::timestamptz[], $9::timestamptz[], $10::timestamptz[])
                AS o(id, product_id, country, product_type, purchase_token, price_nanos, currency, purchased_at,
                     expires_at, first_purchased_at)
            -- By the primary key and a hash of the list: the ids are this app's (from `ordersToDescribe` or
            -- `reviewsEnded`), and a test of app_id too made the planner expect one row and compare each row with
            -- the whole list (200 x 200 for a pull).
            WHERE q.id = ANY ($1::bigint[]) AND q.id = o.id
            """,
            [
                PostgresArray(described.map(\.id)), PostgresNullableTextArray(orders.map { $0?.productId }),
                PostgresNullableTextArray(orders.map { $0?.country }),
                PostgresNullableTextArray(orders.map { $0?.productType }),
                PostgresNullableTextArray(orders.map { $0?.purchaseToken }),
                PostgresArray(orders.map { $0?.priceNanos }),
                PostgresNullableTextArray(orders.map { $0?.currency }), PostgresArray(orders.map { $0?.purchasedAt }),
                PostgresArray(orders.map { $0?.expiresAt }), PostgresArray(orders.map { $0?.firstPurchasedAt }),
            ])
    }

    /// Records Google's decisions on ended reviews, in one statement (unless one was recorded meanwhile).
    func decide(
        _ decisions: [(id: Int64, decision: RefundRequestDecision)], at: Date, on connection: PostgresConnection
    )
        throws
    {
        guard !decisions.isEmpty else { return }
        try connection.execute(
            """
            UPDATE refund_request q SET decision = d.decision, decided_at = $3
            FROM unnest($1::bigint[], $2::text[]) AS d(id, decision)
            -- As in `describe`: this app's ids (from `reviewsEnded`), by the primary key.
            WHERE q.id = ANY ($1::bigint[]) AND q.id = d.id AND (q.decision IS NULL OR q.decision = 'pending')
            """, [PostgresArray(decisions.map(\.id)), PostgresTextArray(decisions.map(\.decision.rawValue)), at])
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
                  AND NOT \(RefundRequestStore.askedAgain(before: "f.refunded_at"))
            )
            UPDATE refund_request q SET decision = 'refunded', decided_at = refunded.refunded_at,
                   revocation_milli = coalesce(q.revocation_milli, refunded.percentage_milli)
            -- `= ANY` as well: the rows by their primary key, not a scan of every request joined to the list.
            FROM refunded WHERE q.id = ANY (ARRAY(SELECT id FROM refunded)) AND q.id = refunded.id
            """, [appId])
    }
}
