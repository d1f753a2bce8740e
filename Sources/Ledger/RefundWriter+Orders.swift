import Foundation
import PlayDeveloperAPI
import Postgres

/// The refund rows an Orders API answer (or its refusal) changes, and reversals.
extension RefundWriter {
    /// After a voided page is stored: returns the order ids whose stored refund rows still need the store's amount
    /// (never asked, pending at Google, or a revoked row recorded since the order was last asked), and drops those
    /// orders' rows of refunds without revocation until the answer comes: the voided list may now show the same money
    /// revoked, and the answer (``replaceUnrevoked(_:stored:runId:on:)``) puts back every event no voided row claims.
    /// An order not asked again keeps its rows: a voided row seen again (an overlap, a rerun, a backfill) must not
    /// drop a goodwill refund the last answer recorded beside it. One probe of the ledger per order serves both.
    func settleVoided(_ orderIds: [String], on connection: PostgresConnection) throws -> [String] {
        try connection.query(
            """
            WITH probe AS MATERIALIZED (
                SELECT r.* FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS u(id)) i
                CROSS JOIN LATERAL (
                    -- By key, per id (OFFSET 0 keeps the planner from flattening the lookups into a scan).
                    SELECT id, order_id, revoked, amount_source, recorded_at FROM refund
                    WHERE app_id = $1 AND order_id = i.id AND platform = 'google'
                    OFFSET 0
                ) r
            ), ask AS MATERIALIZED (
                SELECT DISTINCT p.order_id FROM probe p
                LEFT JOIN LATERAL (
                    SELECT order_id, status, refund_pending, fetched_at FROM google_order
                    WHERE app_id = $1 AND order_id = p.order_id
                    OFFSET 0
                ) o ON true
                WHERE p.revoked
                  AND (o.order_id IS NULL OR (o.status = 'ok' AND o.refund_pending)
                       OR (o.status = 'ok' AND p.amount_source IS DISTINCT FROM 'store'
                           AND o.fetched_at < p.recorded_at))
            ), gone AS (
                DELETE FROM refund d USING probe p
                WHERE d.id = p.id AND NOT p.revoked AND p.order_id IN (SELECT order_id FROM ask)
                RETURNING d.order_id, d.part_key, d.recorded_at
            ), kept AS (
                -- Until the answer puts the row back (``restoreRecorded``), with when it was first recorded.
                INSERT INTO refund_set_aside AS s (app_id, order_id, part_key, recorded_at)
                SELECT $1, order_id, part_key, recorded_at FROM gone
                ON CONFLICT (app_id, order_id, part_key) DO UPDATE
                    SET recorded_at = least(s.recorded_at, EXCLUDED.recorded_at)
            )
            SELECT order_id FROM ask ORDER BY 1
            """, [appId, PostgresTextArray(orderIds)]
        ).map { try $0.decode("order_id") }
    }

    /// Orders Google would not give: their refund rows note why they have no store amount and take the configured
    /// estimate in the sale's currency as far as it is known (``ConfiguredPrices``), unless the store's amount is
    /// there (``RefundAmountRule``).
    func estimateRefused(_ orderIds: [String], note: AmountNote, on connection: PostgresConnection) throws {
        try connection.execute(
            Self.estimateRefusedSQL, [appId, PostgresTextArray(orderIds), note.rawValue] + prices.parameters)
    }

    // $1 app, $2 order ids, $3 the note, $4 ... $7 the configured estimates. A refund already estimated is estimated
    // again: what is known of the sale may have grown since.
    static let estimateRefusedSQL = """
        WITH estimate AS (
            SELECT r.id, coalesce(p.currency, o.currency) AS currency, p.price_milli
            FROM refund r
            LEFT JOIN subscription s ON s.id = r.subscription_id
        \(ConfiguredPrices.saleCurrencyJoin(
            alias: "o", orderId: "r.order_id", currentOrderId: "s.current_order_id", when: "true"))
        \(ConfiguredPrices.priceJoin(alias: "p", first: 4, product: "r.product_id", currency: "o.currency", when: "true"))
            WHERE r.app_id = $1 AND r.platform = 'google' AND r.order_id = ANY ($2::text[])
              AND \(RefundAmountRule.decisionSQL(stored: "r.amount_source", fixed: .estimate))
                  = '\(RefundAmountRule.Decision.replace.rawValue)'
        )
        UPDATE refund r SET amount_note = $3, price_milli = e.price_milli, gross_amount = e.price_milli * r.quantity,
            tax_amount = NULL,
            amount_precision = CASE WHEN e.price_milli IS NOT NULL THEN \(RefundAmountRule.estimatePrecision) END,
            amount_source = CASE WHEN e.price_milli IS NOT NULL THEN '\(AmountSource.configured.rawValue)' END,
            currency = CASE WHEN e.price_milli IS NOT NULL THEN e.currency ELSE r.currency END
        FROM estimate e
        WHERE r.id = e.id
        """

    /// Writes the revoked rows' amounts (by row id) as ``RefundAmountRule/OrderAmount`` gives them, where the rule
    /// lets the offer replace what is stored.
    func savePartAmounts(
        _ priced: [(GoogleOrderPricing.PartPrice, PlayOrder)], on connection: PostgresConnection
    ) throws {
        guard !priced.isEmpty else { return }
        let amounts = priced.map {
            RefundAmountRule.OrderAmount($0.0, productId: $0.1.lineItems?.first?.productId, prices: prices)
        }
        precondition(amounts.allSatisfy { $0.offer != .voidedRow }, "an order's answer states or estimates")
        try connection.execute(
            Self.savePartAmountsSQL,
            [
                appId, PostgresArray(priced.map(\.0.rowId)), PostgresArray(amounts.map(\.gross)),
                PostgresArray(amounts.map(\.tax)), PostgresArray(amounts.map(\.precision)),
                PostgresNullableTextArray(amounts.map { $0.source?.rawValue }),
                PostgresNullableTextArray(amounts.map(\.currency)), PostgresArray(priced.map(\.0.quantity)),
                PostgresNullableTextArray(amounts.map { $0.note?.rawValue }),
                PostgresNullableTextArray(priced.map { $0.1.buyerAddress?.buyerCountry }),
                PostgresNullableTextArray(priced.map { $0.1.lineItems?.first?.productId }),
                PostgresNullableTextArray(priced.map { $0.1.orderHistory?.refundEvent?.refundReason }),
                PostgresArray(amounts.map(\.unit)), PostgresArray(amounts.map(\.offer.rawValue)),
            ])
    }

    static let savePartAmountsSQL = """
        UPDATE refund r SET gross_amount = p.gross, tax_amount = p.tax, amount_precision = p.precision,
            amount_source = p.source, currency = coalesce(p.currency, r.currency), quantity = p.quantity,
            amount_note = p.note, buyer_country = coalesce(p.country, r.buyer_country),
            product_id = coalesce(r.product_id, p.product), refund_reason = p.reason,
            -- Only an estimate keeps a (configured) unit price.
            price_milli = p.unit
        FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::smallint[], $6::text[], $7::text[], $8::int[],
                    $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::text[])
            AS p(id, gross, tax, precision, source, currency, quantity, note, country, product, reason, unit, offer)
        -- Found by id; the app is checked, not searched by (`IS TRUE` keeps the planner off the app's index,
        -- which on a table still growing looked cheaper than a thousand key lookups and read every row).
        WHERE r.id = p.id AND (r.app_id = $1) IS TRUE
          AND \(RefundAmountRule.decisionSQL(stored: "r.amount_source", offer: "p.offer"))
              = '\(RefundAmountRule.Decision.replace.rawValue)'
        """

    /// Makes the orders' refunds without revocation exactly `records`: upserts them and deletes the rows of these
    /// orders (`stored`, by order id and part key, read in the same transaction) the orders no longer show (an event
    /// a voided row now claims).
    func replaceUnrevoked(
        _ records: [RefundRecord], stored: [String: [String: Int64]], runId: Int64?,
        on connection: PostgresConnection
    ) throws {
        var gone = stored
        for record in records { gone[record.orderId]?[record.part.key] = nil }
        try deleteUnrevoked(gone.values.flatMap(\.values), on: connection)
        _ = try upsert(records, runId: runId, on: connection)
    }

    /// After an answer about these orders: the rows of refunds without revocation that ``settleVoided(_:on:)`` set
    /// aside and the answer put back take their first `recorded_at` again (a refund of a closed month stays in it);
    /// the orders' set-aside keys are forgotten, those no voided row claims and those it does alike.
    func restoreRecorded(_ orderIds: [String], on connection: PostgresConnection) throws {
        guard !orderIds.isEmpty else { return }
        try connection.execute(
            """
            WITH kept AS (
                DELETE FROM refund_set_aside WHERE app_id = $1 AND order_id = ANY ($2::text[])
                RETURNING order_id, part_key, recorded_at
            )
            UPDATE refund r SET recorded_at = k.recorded_at
            FROM kept k
            WHERE r.app_id = $1 AND r.order_id = k.order_id AND r.part_key = k.part_key AND NOT r.revoked
              AND k.recorded_at < r.recorded_at
            """, [appId, PostgresTextArray(orderIds)])
    }

    /// Deletes rows of refunds without revocation by id (an event a voided row now claims).
    private func deleteUnrevoked(_ ids: [Int64], on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.execute(
            "DELETE FROM refund WHERE id = ANY ($2::bigint[]) AND app_id = $1 AND NOT revoked",
            [appId, PostgresArray(ids)])
    }

    /// Marks the whole-transaction refunds of these ids reversed at their dates (never deletes them); returns the
    /// subscriptions of the rows that changed.
    func markReversed(transactionIds: [String], at dates: [Date], on connection: PostgresConnection) throws
        -> [Int64?]
    {
        try connection.query(
            """
            UPDATE refund r SET reversed_at = i.reversed_at
            FROM unnest($2::text[], $3::timestamptz[]) AS i(order_id, reversed_at)
            WHERE r.app_id = $1 AND r.order_id = i.order_id AND r.part_key = '' AND r.reversed_at IS NULL
            RETURNING r.subscription_id
            """,
            [appId, PostgresTextArray(transactionIds), PostgresTextArray(dates.map(PostgresTimestamp.format))]
        ).map { try $0.decodeIfPresent("subscription_id") }
    }
}
