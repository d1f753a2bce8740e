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

    /// One revoked row's amount as it is written: the store's, else an estimate in the order's currency from the
    /// configured prices (the product's only price when the order states no currency), else none.
    struct PartAmount {
        var gross: Int64?
        var tax: Int64?
        var precision: Int?
        var source: AmountSource?
        var note: AmountNote?
        var currency: String?
        /// The configured unit price of an estimate.
        var unit: Int64?

        init(_ price: GoogleOrderPricing.PartPrice, order: PlayOrder, prices: ConfiguredPrices) {
            (note, currency) = (price.note, price.currency)
            if let gross = price.gross {
                (self.gross, tax, precision, source) = (gross, price.tax, 9, .store)
            } else if price.note != .overRefunded,
                let estimate = prices.estimate(of: order.lineItems?.first?.productId, in: price.currency)
            {
                (self.gross, precision, source) = (estimate.milli * Int64(price.quantity), 3, .configured)
                (currency, unit) = (estimate.currency, estimate.milli)
            } else if price.note == nil || price.note == .noRefundEvent,
                prices.milli[order.lineItems?.first?.productId ?? ""] != nil
            {
                note = .noConfiguredPrice
            }
        }
    }

    /// Writes the revoked rows' amounts (by row id). A store amount already there is kept when the order no longer
    /// states one, unless the order's figures are impossible (its refunds then leave the totals).
    func savePartAmounts(
        _ priced: [(GoogleOrderPricing.PartPrice, PlayOrder)], on connection: PostgresConnection
    ) throws {
        guard !priced.isEmpty else { return }
        let amounts = priced.map { PartAmount($0.0, order: $0.1, prices: prices) }
        try connection.execute(
            """
            UPDATE refund r SET gross_amount = p.gross, tax_amount = p.tax, amount_precision = p.precision,
                amount_source = p.source, currency = coalesce(p.currency, r.currency), quantity = p.quantity,
                amount_note = p.note, buyer_country = coalesce(p.country, r.buyer_country),
                product_id = coalesce(r.product_id, p.product), refund_reason = p.reason,
                -- Only an estimate keeps a (configured) unit price.
                price_milli = p.unit
            FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::smallint[], $6::text[], $7::text[], $8::int[],
                        $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[])
                AS p(id, gross, tax, precision, source, currency, quantity, note, country, product, reason, unit)
            -- Found by id; the app is checked, not searched by (`IS TRUE` keeps the planner off the app's index,
            -- which on a table still growing looked cheaper than a thousand key lookups and read every row).
            WHERE r.id = p.id AND (r.app_id = $1) IS TRUE
              AND (p.source = 'store' OR r.amount_source IS DISTINCT FROM 'store' OR p.note = 'over_refunded')
            """,
            [
                appId, PostgresArray(priced.map(\.0.rowId)), PostgresArray(amounts.map(\.gross)),
                PostgresArray(amounts.map(\.tax)), PostgresArray(amounts.map(\.precision)),
                PostgresNullableTextArray(amounts.map { $0.source?.rawValue }),
                PostgresNullableTextArray(amounts.map(\.currency)), PostgresArray(priced.map(\.0.quantity)),
                PostgresNullableTextArray(amounts.map { $0.note?.rawValue }),
                PostgresNullableTextArray(priced.map { $0.1.buyerAddress?.buyerCountry }),
                PostgresNullableTextArray(priced.map { $0.1.lineItems?.first?.productId }),
                PostgresNullableTextArray(priced.map { $0.1.orderHistory?.refundEvent?.refundReason }),
                PostgresArray(amounts.map(\.unit)),
            ])
    }

    /// Makes the orders' refunds without revocation exactly `records`: upserts them and deletes the rows of these
    /// orders (`stored`, by order id and part key, read in the same transaction) the orders no longer show (an event
    /// a voided row now claims).
    func replaceUnrevoked(
        _ records: [RefundRecord], stored: [String: [String: Int64]], runId: Int64?,
        on connection: PostgresConnection
    ) throws {
        var gone = stored
        for record in records { gone[record.orderId]?[record.part.key] = nil }
        let ids = gone.values.flatMap(\.values)
        if !ids.isEmpty {
            try connection.execute(
                "DELETE FROM refund WHERE id = ANY ($2::bigint[]) AND app_id = $1 AND NOT revoked",
                [appId, PostgresArray(ids)])
        }
        _ = try RefundLedger(appId: appId, prices: prices).upsert(records, runId: runId, on: connection)
    }
}
