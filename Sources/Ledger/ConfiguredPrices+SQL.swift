import Postgres

/// The SQL of an estimate, shared by the ledger's upsert and the marking of orders Google refused.
extension ConfiguredPrices {
    /// A `LEFT JOIN LATERAL` giving `<alias>.currency`, the sale's currency of the refund of order `orderId` (an SQL
    /// expression; `$1` is the app): the order's own, as Google stated it, else that of an order of the same purchase
    /// storerecon fetched: `currentOrderId` (the subscription's current order, an SQL expression) or the first order
    /// of a renewal (`GPA.x` of `GPA.x..3`). Each a probe by key, each only when the one before is empty: an `IN` of
    /// the two keys, either of them NULL, was planned as a scan of the app's every order (a Google refund estimated
    /// while the Orders API refused cost three times the upsert of a priced one).
    static func saleCurrencyJoin(alias: String, orderId: String, currentOrderId: String, when: String) -> String {
        """
        LEFT JOIN LATERAL (
            SELECT coalesce(
                (SELECT currency FROM google_order WHERE app_id = $1 AND order_id = \(orderId)),
                (SELECT currency FROM google_order
                 WHERE app_id = $1 AND order_id = \(currentOrderId) AND status = 'ok' AND currency IS NOT NULL),
                (SELECT currency FROM google_order
                 WHERE app_id = $1 AND order_id = nullif(split_part(\(orderId), '..', 1), \(orderId))
                   AND status = 'ok' AND currency IS NOT NULL)) AS currency
            WHERE \(when)
        ) \(alias) ON true
        """
    }

    /// A `LEFT JOIN` of the configured estimates (`$<first>` ... `$<first + 3>`, ``ConfiguredPrices/estimates``) as
    /// `<alias>`: `<alias>.price_milli` and `<alias>.currency` estimate one unit of `product` sold in `currency` (SQL
    /// expressions; `NULL`: unknown).
    static func priceJoin(alias: String, first: Int, product: String, currency: String, when: String) -> String {
        """
        LEFT JOIN unnest($\(first)::text[], $\(first + 1)::text[], $\(first + 2)::text[], $\(first + 3)::bigint[])
                AS \(alias)(product_id, sale_currency, currency, price_milli)
            ON \(when) AND \(alias).product_id = \(product) AND \(alias).sale_currency IS NOT DISTINCT FROM \(currency)
        """
    }

    /// The statement parameters ``priceJoin(alias:first:product:currency:when:)`` reads.
    var parameters: [any PostgresEncodable] {
        let estimates = estimates
        return [
            PostgresArray(estimates.products), PostgresNullableTextArray(estimates.sales),
            PostgresArray(estimates.currencies), PostgresArray(estimates.prices),
        ]
    }
}
