import Foundation
import Postgres

/// The statements that record what the stores said: a page or a pull of requests, and a page of outcomes, one
/// statement each.
extension RefundRequestStore {
    /// One outcome a store notified (Apple `REFUND` / `REFUND_DECLINED`).
    public struct Outcome: Sendable, Equatable {
        /// The transaction the outcome is about.
        public var transactionId: String
        /// What the store decided.
        public var decision: RefundRequestDecision
        /// Apple `revocationType`.
        public var revocationType: String?
        /// Apple `revocationPercentage`, milliunits.
        public var revocationMilli: Int?
        /// When the store decided (the notification's signed date).
        public var at: Date

        /// Creates an outcome.
        public init(
            transactionId: String, decision: RefundRequestDecision, revocationType: String? = nil,
            revocationMilli: Int? = nil, at: Date
        ) {
            self.transactionId = transactionId
            self.decision = decision
            self.revocationType = revocationType
            self.revocationMilli = revocationMilli
            self.at = at
        }
    }

    /// Records each request once, in one statement: a request seen before (by its id, or for Google the same review
    /// published again under another message id) is left as it is, and so is the second of two in `requests`.
    /// Returns the ids (`requestId`) of the requests that were new, in the order given (their row ids follow another
    /// order: see the statement).
    @discardableResult
    public func insert(_ requests: [NewRefundRequest], runId: Int64?, on connection: PostgresConnection) throws
        -> [String]
    {
        let unique = Self.firstOfEach(requests)
        guard !unique.isEmpty else { return [] }
        let parameters: [any PostgresEncodable] =
            [appId, runId] + Self.columns(unique) + [RefundRequestAnswerer.groupSize]
        let new = try connection.query(
            """
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, original_id, product_id,
                product_type, country, family_shared, reason, pending_token, received_at, deadline, purchased_at,
                first_purchased_at, expires_at, first_seen_run, price_nanos, currency, app_transaction_id)
            SELECT $1, i.store, i.request_id, i.transaction_id, i.original_id, i.product_id, i.product_type, i.country,
                   i.family_shared, i.reason, i.pending_token, i.received_at, i.deadline, i.purchased_at,
                   i.first_purchased_at, i.expires_at, $2, i.price_nanos, i.currency, i.app_transaction_id
            FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                        $10::boolean[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[],
                        $15::timestamptz[], $16::timestamptz[], $17::timestamptz[], $18::bigint[], $19::text[],
                        $20::text[])
                WITH ORDINALITY AS i(store, request_id, transaction_id, original_id, product_id, product_type,
                    country, family_shared, reason, pending_token, received_at, deadline, purchased_at,
                    first_purchased_at, expires_at, price_nanos, currency, app_transaction_id, n)
            -- Google: the same review published again under another message id is the same request.
            WHERE i.pending_token IS NULL OR NOT EXISTS (
                SELECT 1 FROM refund_request r
                WHERE r.app_id = $1 AND r.store = i.store AND r.transaction_id = i.transaction_id
                  AND r.pending_token = i.pending_token)
            -- Requests claimed together (neighbours by deadline) are written apart, a few to a page, so that each
            -- page has room for its rows' next versions (sql/0026).
            ORDER BY i.n % $21, i.n
            ON CONFLICT (app_id, store, request_id) DO NOTHING
            RETURNING request_id
            """,
            parameters)
        let inserted = Set(try new.map { try $0.decode("request_id", as: String.self) })
        return unique.map(\.requestId).filter(inserted.contains)
    }

    /// The requests' columns as the insert's arrays, in its order.
    private static func columns(_ requests: [NewRefundRequest]) -> [any PostgresEncodable] {
        [
            PostgresTextArray(requests.map(\.store.rawValue)), PostgresTextArray(requests.map(\.requestId)),
            PostgresTextArray(requests.map(\.transactionId)), PostgresNullableTextArray(requests.map(\.originalId)),
            PostgresNullableTextArray(requests.map(\.productId)),
            PostgresNullableTextArray(requests.map(\.productType)), PostgresNullableTextArray(requests.map(\.country)),
            PostgresArray(requests.map(\.familyShared)), PostgresNullableTextArray(requests.map(\.reason)),
            PostgresNullableTextArray(requests.map(\.pendingToken)), PostgresArray(requests.map(\.receivedAt)),
            PostgresArray(requests.map(\.deadline)), PostgresArray(requests.map(\.purchasedAt)),
            PostgresArray(requests.map(\.firstPurchasedAt)), PostgresArray(requests.map(\.expiresAt)),
            PostgresArray(requests.map(\.priceNanos)), PostgresNullableTextArray(requests.map(\.currency)),
            PostgresNullableTextArray(requests.map(\.appTransactionId)),
        ]
    }

    /// The first of each request in `requests`: by its id, and for Google by its order and review token (one
    /// statement does not see its own rows, so a repeat inside it is dropped here).
    static func firstOfEach(_ requests: [NewRefundRequest]) -> [NewRefundRequest] {
        struct Review: Hashable {
            var transactionId: String
            var token: String
        }
        var ids = Set<String>()
        var reviews = Set<Review>()
        return requests.filter { request in
            guard ids.insert("\(request.store.rawValue) \(request.requestId)").inserted else { return false }
            guard let token = request.pendingToken else { return true }
            return reviews.insert(Review(transactionId: request.transactionId, token: token)).inserted
        }
    }

    /// Joins the stores' outcomes to the requests about their transactions, in one statement: an outcome answers
    /// the latest request about its transaction received before it (a customer who asks again after a decline
    /// makes a second request: the decline stays the first's, a later refund is the second's), and a request takes
    /// the latest outcome answering it, unless it has a later one. Returns how many requests took one.
    @discardableResult
    public func recordOutcomes(_ outcomes: [Outcome], on connection: PostgresConnection) throws -> Int {
        guard !outcomes.isEmpty else { return 0 }
        return try connection.execute(
            """
            UPDATE refund_request q SET decision = o.decision, decided_at = o.at, revocation_type = o.revocation_type,
                   revocation_milli = o.revocation_milli
            -- One outcome per request (a row is updated once per statement): the latest, the first of equals.
            FROM (
                SELECT DISTINCT ON (t.id) t.id, o.decision, o.revocation_type, o.revocation_milli, o.at
                FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[])
                    WITH ORDINALITY AS o(transaction_id, decision, revocation_type, revocation_milli, at, n)
                CROSS JOIN LATERAL (
                    SELECT r.id FROM refund_request r
                    WHERE r.app_id = $1 AND r.transaction_id = o.transaction_id AND r.received_at <= o.at
                    ORDER BY r.received_at DESC, r.id DESC LIMIT 1
                ) t
                ORDER BY t.id, o.at DESC, o.n
            ) o
            WHERE q.id = o.id AND (q.decision IS NULL OR q.decision = 'pending' OR q.decided_at < o.at)
            """,
            [
                appId, PostgresTextArray(outcomes.map(\.transactionId)),
                PostgresTextArray(outcomes.map(\.decision.rawValue)),
                PostgresNullableTextArray(outcomes.map(\.revocationType)),
                PostgresArray(outcomes.map(\.revocationMilli)), PostgresArray(outcomes.map(\.at)),
            ])
    }
}
