import Foundation

extension AppleTieOut {
    /// The start of Apple's period and of the day after it, as instants.
    private static let (start, end) = (
        "(($1::date[])[2]::timestamp AT TIME ZONE $3)", "((($2::date[])[2] + 1)::timestamp AT TIME ZONE $3)"
    )

    /// The refund report's entries of the period (`$1` ... `$7`; Apple's first and last day are the second elements
    /// of `$1` and `$2`) per product x storefront x currency: units (a prorated refund one unit) and rounded amounts,
    /// reversals negative, with what the causes need. The storefront is the buyer's country, or the payload's
    /// alpha-3 storefront for rows stored without it.
    static let ledgerQuery = """
        \(RefundReport.roundedEntries(.event)), apple AS (
            SELECT e.*,
                   coalesce(e.buyer_country, (
                       SELECT x.payload->>'storefront' FROM refund x
                       WHERE x.app_id = e.app_id AND x.order_id = e.order_id AND x.part_key = e.part_key), '') AS country,
                   e.sign * CASE WHEN e.refund_type = 'prorated' THEN 1 ELSE e.quantity END AS units,
                   e.entry = 'refund' AND e.reversed_at >= \(end) AS later,
                   e.entry = 'reversal' AND e.refunded_at < \(start) AS earlier,
                   e.entry = 'refund' AND \(RefundReport.moves)
                       AND (e.booked_at AT TIME ZONE $3)::date = ($2::date[])[2]
                       AND NOT coalesce(e.reversed_at < \(end), false) AS last_day,
                   -- A refund and its reversal both in the period: they cancel, whatever the amount.
                   coalesce(e.entry = 'refund' AND e.reversed_at < \(end)
                       OR e.entry = 'reversal' AND e.refunded_at >= \(start), false) AS netted
            FROM rounded e
            WHERE e.platform = 'apple'
        )
        SELECT coalesce(product_id, '') AS product, country, coalesce(currency, '') AS currency,
               coalesce(sum(units) FILTER (WHERE \(RefundReport.moves)), 0)::int AS units,
               trunc(coalesce(sum(gross) FILTER (WHERE \(RefundReport.moves)), 0))::text AS nanos,
               count(*) FILTER (WHERE \(RefundReport.moves) AND gross IS NULL AND NOT netted)::int AS unknown,
               count(*) FILTER (WHERE \(RefundReport.moves) AND gross IS NOT NULL)::int AS known,
               count(*) FILTER (WHERE NOT (\(RefundReport.moves)) AND entry = 'refund')::int AS family_revokes,
               coalesce(sum(units) FILTER (WHERE last_day), 0)::int AS last_day_units,
               trunc(coalesce(sum(gross) FILTER (WHERE last_day), 0))::text AS last_day_nanos,
               count(*) FILTER (WHERE last_day AND gross IS NULL)::int AS last_day_unknown,
               CASE WHEN count(DISTINCT gross / nullif(units, 0)) FILTER (WHERE last_day) = 1
                    THEN trunc(min(gross / nullif(units, 0)) FILTER (WHERE last_day))::text END AS last_day_unit_nanos,
               coalesce(sum(units) FILTER (WHERE later AND \(RefundReport.moves)), 0)::int AS later_units,
               trunc(coalesce(sum(gross) FILTER (WHERE later AND \(RefundReport.moves)), 0))::text AS later_nanos,
               count(*) FILTER (WHERE later AND \(RefundReport.moves) AND gross IS NULL)::int AS later_unknown,
               to_char(min(reversed_at AT TIME ZONE $3) FILTER (WHERE later), 'YYYY-MM-DD') AS later_day,
               coalesce(-sum(units) FILTER (WHERE earlier AND \(RefundReport.moves)), 0)::int AS reversal_units,
               trunc(coalesce(-sum(gross) FILTER (WHERE earlier AND \(RefundReport.moves)), 0))::text AS reversal_nanos,
               count(*) FILTER (WHERE earlier AND \(RefundReport.moves) AND gross IS NULL)::int AS reversal_unknown
        FROM apple
        GROUP BY 1, 2, 3
        """
}
