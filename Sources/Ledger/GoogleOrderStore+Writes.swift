import Foundation
import PlayDeveloperAPI
import Postgres

/// The statements behind ``GoogleOrderStore/store(_:payloads:runId:logger:on:)``.
extension GoogleOrderStore {
    /// Upserts the orders into `google_order`, each with its JSON text as Google sent it.
    func saveOrders(_ answered: Answered, on connection: PostgresConnection) throws {
        precondition(!answered.columns.isEmpty, "the orders are rendered")
        try connection.execute(
            """
            INSERT INTO google_order (app_id, order_id, status, state, currency, total_nanos, tax_nanos,
                                      revenue_nanos, buyer_country, product_id, quantity, refund_pending, payload)
            SELECT $1, t.order_id, 'ok', t.state, t.currency, t.total, t.tax, t.revenue, t.country, t.product,
                   t.quantity, t.pending, p.payload
            FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[],
                        $8::text[], $9::text[], $10::int[], $11::boolean[]) WITH ORDINALITY
                AS t(order_id, state, currency, total, tax, revenue, country, product, quantity, pending, n)
            -- The texts come as one JSON array, each element kept as it was written (`json`, not `jsonb`): the
            -- server reads the answer once instead of a thousand escaped array elements.
            JOIN json_array_elements($12::json) WITH ORDINALITY AS p(payload, n) USING (n)
            ON CONFLICT (app_id, order_id) DO UPDATE SET
                status = EXCLUDED.status, state = EXCLUDED.state, currency = EXCLUDED.currency,
                total_nanos = EXCLUDED.total_nanos, tax_nanos = EXCLUDED.tax_nanos,
                revenue_nanos = EXCLUDED.revenue_nanos, buyer_country = EXCLUDED.buyer_country,
                product_id = EXCLUDED.product_id, quantity = EXCLUDED.quantity,
                refund_pending = EXCLUDED.refund_pending, payload = EXCLUDED.payload, fetched_at = now(),
                fetch_count = google_order.fetch_count + 1
            """, [appId] + answered.columns)
    }

    /// `saveOrders`' parameters `$2` ... `$12`, rendered.
    static func orderColumns(_ orders: [PlayOrder], payloads: [String]) -> [String?] {
        let columns: [any PostgresEncodable] = [
            PostgresTextArray(orders.map(\.orderId)), PostgresNullableTextArray(orders.map(\.state)),
            PostgresNullableTextArray(orders.map { $0.total?.currencyCode }),
            PostgresArray(orders.map { $0.total?.totalNanos }),
            PostgresArray(orders.map { $0.tax?.totalNanos }),
            PostgresArray(orders.map { $0.developerRevenueInBuyerCurrency?.totalNanos }),
            PostgresNullableTextArray(orders.map { $0.buyerAddress?.buyerCountry }),
            PostgresNullableTextArray(orders.map { $0.lineItems?.first?.productId }),
            PostgresArray(
                orders.map { order in order.lineItems?.first.map { $0.oneTimePurchaseDetails?.quantity ?? 1 } }),
            PostgresArray(orders.map(\.refundPending)), jsonArray(payloads),
        ]
        return columns.map(\.postgresText)
    }

    /// The orders' texts as one JSON array (each already a JSON object).
    static func jsonArray(_ texts: [String]) -> PostgresJSON {
        var out = "["
        out.reserveCapacity(texts.reduce(2) { $0 + $1.utf8.count + 1 })
        for (index, text) in texts.enumerated() {
            if index > 0 { out += "," }
            out += text
        }
        out += "]"
        return PostgresJSON(text: out)
    }
}
