import Foundation
import Postgres

extension ConsumptionFactStore {
    /// What one request of a group is decided with: the backend's facts and the customer's earlier refunds.
    struct FactsAndPrior: Equatable {
        var facts: ConsumptionFacts?
        var priorRefunds: Int
    }

    /// ``factsAndPriorRefunds(platform:ids:customer:on:)`` for a group of one app's requests of one store, in one
    /// round trip: for each request, in order, the facts by its transaction id, else by its original id, and the
    /// refunds of its customer (`original_id`) in the ledger other than the transaction asked about.
    static func factsAndPriorRefunds(
        for requests: [NewRefundRequest], platform: RequestingStore, appId: String, on connection: PostgresConnection
    ) throws -> [FactsAndPrior] {
        guard !requests.isEmpty else { return [] }
        let rows = try connection.query(
            """
            SELECT q.n, f.purchase_id, f.customer_consented, f.delivery_status, f.consumption_milli,
                   f.sample_content_provided, f.as_of,
                   (SELECT count(*)::int FROM refund r
                    WHERE r.app_id = $2 AND r.original_id = q.original_id AND r.order_id <> q.transaction_id
                      AND r.reversed_at IS NULL) AS prior
            FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS q(transaction_id, original_id, n)
            LEFT JOIN consumption_fact f
                ON f.platform = $1 AND (f.purchase_id = q.transaction_id OR f.purchase_id = q.original_id)
            """,
            [
                platform.rawValue, appId, PostgresTextArray(requests.map(\.transactionId)),
                PostgresNullableTextArray(requests.map(\.originalId)),
            ])
        var found = [FactsAndPrior](repeating: FactsAndPrior(facts: nil, priorRefunds: 0), count: requests.count)
        for row in rows {
            let index = Int(try row.decode("n", as: Int64.self)) - 1
            guard found.indices.contains(index) else { continue }
            found[index].priorRefunds = try row.decodeIfPresent("prior") ?? 0
            guard let id: String = try row.decodeIfPresent("purchase_id"),
                let delivery = DeliveryStatus(rawValue: try row.decode("delivery_status"))
            else { continue }
            // The transaction's own facts win over those kept under its original id.
            if found[index].facts != nil, id != requests[index].transactionId { continue }
            found[index].facts = ConsumptionFacts(
                customerConsented: try row.decode("customer_consented"), deliveryStatus: delivery,
                consumptionMilli: try row.decodeIfPresent("consumption_milli"),
                sampleContentProvided: try row.decode("sample_content_provided"), asOf: try row.decode("as_of"))
        }
        return found
    }
}
