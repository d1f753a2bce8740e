import Foundation
import Postgres

extension ConsumptionFactStore {
    /// What one request of a group is decided with: the backend's facts, the customer's earlier refunds and the
    /// earliest purchase of the customer's that the ledger dates.
    struct FactsAndPrior: Equatable {
        var facts: ConsumptionFacts?
        var priorRefunds: Int
        var firstPurchasedAt: Date? = nil
    }

    /// The facts and earlier refunds of a group of one app's requests of one store, in one round trip: for each
    /// request, in order, the facts by its transaction id, else by its original id; and of its customer's refunds in
    /// the ledger, those of other transactions neither reversed nor family revocations, and the earliest purchase date
    /// of those not family revocations (a family member did not buy those). The customer is the purchase's
    /// `original_id`; for Apple, with the original transactions the refund sync grouped as one customer's
    /// (`apple_refund_cursor`: ids whose refund histories hold each other's, or that share an appTransactionId or a
    /// user reference), found by the request's original id or its appTransactionId: a one-time purchase is its own
    /// original transaction, and one new to the refund sync has no row of its own there.
    static func factsAndPriorRefunds(
        for requests: [NewRefundRequest], platform: RequestingStore, appId: String, on connection: PostgresConnection
    ) throws -> [FactsAndPrior] {
        guard !requests.isEmpty else { return [] }
        let rows = try connection.query(
            """
            SELECT q.n, f.customer_consented, f.delivery_status, f.consumption_milli,
                   f.sample_content_provided, f.as_of, p.prior, p.first_purchased
            FROM unnest($3::text[], $4::text[], $5::text[])
                WITH ORDINALITY AS q(transaction_id, original_id, app_transaction_id, n)
            LEFT JOIN LATERAL (
                SELECT count(*) FILTER (WHERE r.order_id <> q.transaction_id AND r.reversed_at IS NULL
                                          AND r.refund_type <> 'family_revoke')::int AS prior,
                       min(r.purchased_at) FILTER (WHERE r.refund_type <> 'family_revoke') AS first_purchased
                FROM refund r
                WHERE r.app_id = $2 AND r.original_id IN (
                    SELECT q.original_id
                    UNION
                    SELECT m.original_transaction_id
                    FROM apple_refund_cursor c
                    JOIN apple_refund_cursor m ON m.app_id = c.app_id
                     AND coalesce(c.customer, c.original_transaction_id)
                         IN (m.original_transaction_id, m.customer)
                    WHERE $1 = 'apple' AND c.app_id = $2
                      AND (c.original_transaction_id = q.original_id OR c.app_transaction_id = q.app_transaction_id))
            ) p ON true
            -- By the primary key (an OR of the two ids would read the whole table for every request); the
            -- transaction's own facts first.
            LEFT JOIN LATERAL (
                SELECT * FROM consumption_fact c
                WHERE c.platform = $1 AND c.purchase_id = ANY (ARRAY[q.transaction_id, q.original_id])
                ORDER BY c.purchase_id = q.transaction_id DESC LIMIT 1
            ) f ON true
            """,
            [
                platform.rawValue, appId, PostgresTextArray(requests.map(\.transactionId)),
                PostgresNullableTextArray(requests.map(\.originalId)),
                PostgresNullableTextArray(requests.map(\.appTransactionId)),
            ])
        var found = [FactsAndPrior](repeating: FactsAndPrior(facts: nil, priorRefunds: 0), count: requests.count)
        for row in rows {
            let index = Int(try row.decode("n", as: Int64.self)) - 1
            guard found.indices.contains(index) else { continue }
            found[index].priorRefunds = try row.decodeIfPresent("prior") ?? 0
            found[index].firstPurchasedAt = try row.decodeIfPresent("first_purchased")
            found[index].facts = try ConsumptionFacts(row: row)
        }
        return found
    }
}

extension ConsumptionFacts {
    /// The facts of a `consumption_fact` row; nil when the row has none (an outer join found nothing) or a delivery
    /// status this version does not know.
    init?(row: PostgresRow) throws {
        guard let status: String = try row.decodeIfPresent("delivery_status"),
            let delivery = DeliveryStatus(rawValue: status)
        else { return nil }
        self.init(
            customerConsented: try row.decode("customer_consented"), deliveryStatus: delivery,
            consumptionMilli: try row.decodeIfPresent("consumption_milli"),
            sampleContentProvided: try row.decode("sample_content_provided"), asOf: try row.decode("as_of"))
    }
}
