import Foundation

extension GoogleTieOut {
    /// The two sides joined by order, in order id order. The ledger's side is the refund report's entries of the
    /// store month, so both print one figure: `$1` ... `$7` select them from the previous month's last day on, and
    /// the ledger counts those from `$12`, the month's first day (US Pacific); an order's entries of the previous
    /// month's last day, which Google books in this month, are summed apart (`previous_nanos`). `$8` the app, `$9`
    /// the month, `$10` the next month, `$11` the month's last day (every entry is before its end, so one from its
    /// start on is of that day). Report-only orders carry what their cause needs: the latest day the ledger
    /// refunded them in any month, and whether storerecon read them from the Orders API.
    /// The account's file holds every app's rows: those of the app's package (`$8`'s), or of a row stored before
    /// packages were kept.
    static let ofTheApp = "(r.package IS NULL OR r.package = (SELECT a.store_app_id FROM app a WHERE a.id = $8))"

    static let query = """
        \(RefundReport.roundedEntries(.event)), net AS (
            -- OFFSET 0 keeps this a subquery of its own, so each entry's rounded amounts are computed once, not once
            -- per aggregate that reads them.
            SELECT order_id, product_id, buyer_country, currency, entry, booked_at, amount_source,
                   gross - coalesce(tax, 0) AS net
            FROM rounded
            WHERE platform = 'google' AND \(RefundReport.moves)
            OFFSET 0
        ), previous AS (
            SELECT order_id, CASE WHEN count(*) FILTER (WHERE net IS NULL) = 0 THEN trunc(sum(net))::text END AS nanos
            FROM net
            WHERE booked_at < ($12::date::timestamp AT TIME ZONE $3)
            GROUP BY order_id
        ), ledger AS (
            SELECT order_id, min(coalesce(product_id, '')) AS product, min(coalesce(buyer_country, '')) AS country,
                   -- The priced entries' currency: an entry without an amount may have none yet.
                   coalesce(min(currency) FILTER (WHERE net IS NOT NULL), min(coalesce(currency, ''))) AS currency,
                   count(*) FILTER (WHERE entry = 'refund') AS refunds,
                   bool_or(entry = 'reversal') AS reversed, bool_or(amount_source = 'configured') AS estimated,
                   trunc(sum(net))::text AS nanos, count(*) FILTER (WHERE net IS NULL) AS unknown,
                   trunc(coalesce(sum(net) FILTER (WHERE booked_at >= ($11::date::timestamp AT TIME ZONE $3)), 0))::text
                       AS last_day_nanos,
                   bool_or(booked_at >= ($11::date::timestamp AT TIME ZONE $3)) AS last_day
            FROM net
            WHERE booked_at >= ($12::date::timestamp AT TIME ZONE $3)
            GROUP BY order_id
        ), report AS (
            SELECT r.order_id, min(coalesce(r.product_id, '')) AS product, min(coalesce(r.country, '')) AS country,
                   min(r.amount_currency) AS currency, count(*) AS n, (-sum(r.amount_nanos))::text AS nanos,
                   min(r.booked_at) AS booked_at
            FROM payout_report p JOIN payout_report_row r ON r.report_id = p.id
            WHERE p.app_id = $8 AND p.store = 'google' AND p.month = $9 AND r.kind = 'Charge refund' AND \(Self.ofTheApp)
            GROUP BY r.order_id
        ), later AS (
            SELECT r.order_id, (-sum(r.amount_nanos))::text AS nanos
            FROM payout_report p JOIN payout_report_row r ON r.report_id = p.id
            WHERE p.app_id = $8 AND p.store = 'google' AND p.month = $10 AND r.kind = 'Charge refund'
                  AND \(Self.ofTheApp)
            GROUP BY r.order_id
        )
        SELECT coalesce(l.order_id, t.order_id) AS order_id, l.order_id IS NOT NULL AS in_ledger,
               t.order_id IS NOT NULL AS in_report, l.product AS l_product, l.country AS l_country,
               l.currency AS l_currency, l.refunds, l.reversed, l.estimated, l.nanos, l.unknown, l.last_day_nanos,
               l.last_day,
               n.order_id IS NOT NULL AS booked_later, n.nanos AS later_nanos, p.nanos AS previous_nanos, t.product AS t_product,
               t.country AS t_country, t.currency AS t_currency, t.n, t.nanos AS report_nanos, t.booked_at,
               CASE WHEN l.order_id IS NULL THEN (
                   SELECT to_char(max(x.refunded_at AT TIME ZONE $3), 'YYYY-MM-DD') FROM refund x
                   WHERE x.app_id = $8 AND x.order_id = t.order_id AND x.refund_type <> 'family_revoke')
               END AS ledger_day,
               CASE WHEN l.order_id IS NULL THEN o.order_id IS NOT NULL END AS known,
               CASE WHEN o.status = 'ok' AND o.state IS DISTINCT FROM 'REFUNDED'
                         AND o.state IS DISTINCT FROM 'PARTIALLY_REFUNDED' AND o.state IS DISTINCT FROM 'PENDING_REFUND'
                    THEN o.fetched_at
               END AS read_unrefunded_at
        FROM ledger l
        FULL JOIN report t ON t.order_id = l.order_id
        -- Report-only orders: what storerecon read of them (one row at most: the key is app and order).
        LEFT JOIN google_order o ON l.order_id IS NULL AND o.app_id = $8 AND o.order_id = t.order_id
        LEFT JOIN later n ON n.order_id = l.order_id
        LEFT JOIN previous p ON p.order_id = coalesce(l.order_id, t.order_id)
        ORDER BY 1
        """
}
