import Foundation
import Postgres

extension RefundReport {
    /// The parameters every report query starts with: `$1` first days, `$2` last days (inclusive), `$3` time zone,
    /// `$4` app ids (empty: all), `$5` environment filter. The days are arrays: one day for every store, or with
    /// ``RefundReportOptions/storePeriods`` two, Google's month and Apple's fiscal period (`NULL` when unknown).
    static func rangeParameters(_ options: RefundReportOptions) -> [any PostgresEncodable] {
        let (first, last): ([String?], [String?]) =
            options.storePeriods.map { periods in
                ([periods.google.first, periods.apple?.first], [periods.google.last, periods.apple?.last])
            } ?? ([options.from], [options.to])
        return [
            PostgresArray(first), PostgresArray(last), options.timeZone, PostgresTextArray(options.apps),
            options.environment.rawValue,
        ]
    }

    /// `$6`, `$7`: the currencies whose minor unit is known and their ISO 4217 exponents, for rounding each entry.
    static var roundingParameters: [any PostgresEncodable] {
        let table = Money.minorUnits.sorted { $0.key < $1.key }
        return [PostgresTextArray(table.map(\.key)), PostgresArray(table.map(\.value))]
    }

    /// The ledger as accounting entries booked in the range: every refund once, on its own time, and every reversal
    /// once more, on the reversal's time, with `sign` -1. The booking time is the store's (`event`) or when
    /// storerecon first recorded the entry (`recorded`; a reversal is recorded when both it and its refund are).
    /// Uses `$1` ... `$5` (``rangeParameters(_:)``); the range is computed in the report's zone by PostgreSQL's own
    /// time-zone data, so DST days have their true length. The SQL text varies only by the basis, never by data.
    ///
    /// With store periods (two days in `$1`), Apple's entries are booked over Apple's period, and `recorded` books
    /// an entry on its store's time unless the store's period of that time was closed (its financial report loaded)
    /// before storerecon recorded the entry: a late entry is booked when it was recorded, so a closed month keeps
    /// its figures. With store periods `recorded` keeps its amounts too: each entry carries the amount it had when
    /// the period it is booked in closed, and an amount changed after that is booked as `restated` entries when it
    /// changed
    /// (``restatedEntries(refundAt:reversalAt:reversalRecorded:)``).
    static func entries(_ basis: RefundReportOptions.Basis) -> String {
        let reversalRecorded = "greatest(r.recorded_at, coalesce(v.recorded_at, r.reversed_at))"
        guard basis == .recorded else {
            return """
                entry AS (
                    \(entrySelect(.refund, at: "r.refunded_at", recorded: "r.recorded_at", sign: "1"))
                    FROM refund r
                    WHERE \(inRange("r.refunded_at"))
                      \(entryFilter)
                    UNION ALL
                    \(entrySelect(.reversal, at: "r.reversed_at", recorded: reversalRecorded, sign: "-1"))
                    FROM refund r
                    \(reversalJoin)
                    WHERE r.reversed_at IS NOT NULL
                      AND \(inRange("r.reversed_at"))
                      \(entryFilter)
                )
                """
        }
        let refundAt = booked(event: "r.refunded_at", recorded: "r.recorded_at")
        let reversalAt = booked(event: "r.reversed_at", recorded: reversalRecorded)
        return """
            first_change AS (
                SELECT DISTINCT ON (c.refund_id) c.*
                FROM refund_amount_change c JOIN refund r ON r.id = c.refund_id
                WHERE \(restates(booked: refundAt, changed: "c.changed_at"))
                ORDER BY c.refund_id, c.changed_at, c.id
            ), entry AS (
                \(entrySelect(.refund, at: refundAt, recorded: "r.recorded_at", sign: "1", amounts: .before("a")))
                FROM refund r
                LEFT JOIN first_change a ON a.refund_id = r.id
                WHERE \(inRange(refundAt))
                  \(entryFilter)
                UNION ALL
                \(entrySelect(.reversal, at: reversalAt, recorded: reversalRecorded, sign: "-1", amounts: .before("a")))
                FROM refund r
                \(reversalJoin)
                LEFT JOIN LATERAL (
                    SELECT * FROM refund_amount_change c
                    WHERE c.refund_id = r.id AND c.changed_at >= \(reversalRecorded)
                      AND \(restates(booked: reversalAt, changed: "c.changed_at"))
                    ORDER BY c.changed_at, c.id LIMIT 1
                ) a ON true
                WHERE r.reversed_at IS NOT NULL
                  AND \(inRange(reversalAt))
                  \(entryFilter)
                UNION ALL
                \(restatedEntries(refundAt: refundAt, reversalAt: reversalAt, reversalRecorded: reversalRecorded))
            )
            """
    }

    /// An entry's columns: the refund's, with `amounts` (the ledger's now unless said otherwise). `replaced` marks
    /// the amount a `restated` entry takes out (in no count of unknown amounts). An amount without its currency is
    /// unknown: amounts of different currencies are never added.
    static func entrySelect(
        _ entry: RefundReport.Entry, at: String, recorded: String, sign: String, quantity: String = "r.quantity",
        amounts: EntryAmounts = .current, replaced: String = "false", change: String = "NULL::bigint"
    ) -> String {
        """
        SELECT '\(entry.rawValue)'::text AS entry, \(sign) AS sign, \(at) AS booked_at, \(recorded) AS recorded_at,
               r.refunded_at, r.reversed_at, r.platform, r.app_id, r.order_id, r.part_key, r.original_id,
               r.product_id, r.reason_code, r.reason_label, r.refund_type, \(quantity) AS quantity, r.percentage_milli,
               r.price_milli, \(amounts.currency) AS currency, r.buyer_country, \(amounts.source) AS amount_source,
               \(amounts.note) AS amount_note, r.revoked, lower(coalesce(r.environment, 'production')) AS environment,
               CASE WHEN \(amounts.currency) IS NOT NULL THEN \(amounts.gross) END AS gross_exact,
               CASE WHEN \(amounts.currency) IS NOT NULL THEN \(amounts.tax) END AS tax_exact, \(replaced) AS replaced,
               \(change) AS change_id
        """
    }

    /// The report's app and environment filter (`$4`, `$5`) on the refund `r`.
    static let entryFilter = """
        AND (cardinality($4::text[]) = 0 OR r.app_id = ANY ($4::text[]))
        AND ($5::text = 'all'
             OR ($5::text = 'production') = (lower(coalesce(r.environment, 'production')) = 'production'))
        """

    /// An Apple reversal's own record (`v`), which says when storerecon recorded it.
    static let reversalJoin = """
        LEFT JOIN apple_refund_reversal v
            ON r.platform = 'apple' AND v.app_id = r.app_id AND v.transaction_id = r.order_id
        """

    /// `at` within the range: first between the earliest first day and the latest last day (constants, so an
    /// index on the column serves), then within its own store's days (each store's bound a constant too, so no row
    /// converts a time zone).
    static func inRange(_ at: String) -> String {
        func bound(_ days: String, _ index: String, plus: Int) -> String {
            "((\(days)::date[])[\(index)] + \(plus))::timestamp AT TIME ZONE $3"
        }
        func store(_ days: String, plus: Int) -> String {
            "CASE WHEN r.platform = 'apple' THEN \(bound(days, "cardinality(\(days)::date[])", plus: plus)) "
                + "ELSE \(bound(days, "1", plus: plus)) END"
        }
        return """
            \(at) >= (least(($1::date[])[1], ($1::date[])[2])::timestamp AT TIME ZONE $3)
                  AND \(at) < ((greatest(($2::date[])[1], ($2::date[])[2]) + 1)::timestamp AT TIME ZONE $3)
                  AND \(at) >= \(store("$1", plus: 0))
                  AND \(at) < \(store("$2", plus: 1))
            """
    }

    /// The `recorded` booking time: when storerecon recorded the entry, except with store periods an entry recorded
    /// before its store closed the period of `event` (loaded its report), which is booked on `event`.
    static func booked(event: String, recorded: String) -> String {
        "CASE WHEN cardinality($1::date[]) = 1 OR \(closed(event, by: recorded)) THEN \(recorded) ELSE \(event) END"
    }

    /// Whether the store of the refund `r` had closed its period of `at` (loaded its report) by `by`.
    static func closed(_ at: String, by: String) -> String {
        """
        EXISTS (
            SELECT 1 FROM payout_report p
            WHERE p.app_id = r.app_id AND p.store = r.platform AND p.closed_at <= \(by)
              AND (\(at) AT TIME ZONE $3)::date BETWEEN p.period_start AND p.period_end)
        """
    }

    /// Whether a change of the refund `r`'s amount made at `changed` restates an entry booked at `booked`: with
    /// store periods, when the period the entry is booked in was closed by then. Without them amounts are the
    /// ledger's now (a change then is never restated).
    static func restates(booked: String, changed: String) -> String {
        "(cardinality($1::date[]) > 1 AND \(closed(booked, by: changed)))"
    }

    /// The entries with their amounts rounded, each on its own, half to even to the currency's minor unit (`$6`,
    /// `$7`: ``roundingParameters``; a currency they do not list stays exact) and signed: `gross`, `tax` in nanos.
    static func roundedEntries(_ basis: RefundReportOptions.Basis) -> String {
        """
        WITH \(entries(basis)), minor AS (
            SELECT * FROM unnest($6::text[], $7::int[]) AS m(currency, exponent)
        ), rounded AS (
            SELECT e.*, m.exponent,
                   e.sign * report_round_half_even(e.gross_exact, coalesce(m.exponent, 9)) AS gross,
                   e.sign * report_round_half_even(e.tax_exact, coalesce(m.exponent, 9)) AS tax
            FROM entry e LEFT JOIN minor m ON m.currency = upper(e.currency)
        )
        """
    }

    /// An amount column as exact nanos (`numeric`): the stored integer scaled from its precision to 9 digits.
    static func nanosSQL(_ column: String, precision: String = "r.amount_precision") -> String {
        "(\(column)::numeric * (10::numeric ^ (9 - \(precision))))"
    }

    // Entries that move money (a family revoke moves none).
    static let moves = "refund_type <> 'family_revoke'"

    /// `$8` ... `$16`: whether to group by each ``RefundReportOptions/Dimension`` (in `allCases` order). The grouping
    /// is chosen by parameters, not by building SQL text. Sums are exact (`numeric`, of entries already rounded)
    /// and returned as integer nanos text.
    static func groupQuery(_ basis: RefundReportOptions.Basis) -> String {
        """
        \(roundedEntries(basis))
        SELECT CASE WHEN $8 THEN to_char((booked_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') END AS day,
               CASE WHEN $9 THEN platform END AS platform,
               CASE WHEN $10 THEN app_id END AS app,
               CASE WHEN $11 THEN coalesce(product_id, '') END AS product,
               CASE WHEN $12 THEN reason_label END AS reason,
               CASE WHEN $13 THEN coalesce(currency, 'unknown') END AS currency,
               CASE WHEN $14 THEN coalesce(buyer_country, '') END AS country,
               CASE WHEN $15 THEN coalesce(amount_source, 'none') END AS source,
               CASE WHEN $16 THEN environment END AS environment,
               count(*) FILTER (WHERE entry = 'refund' AND \(moves)) AS refunds,
               coalesce(sum(sign * quantity) FILTER (WHERE \(moves)), 0) AS quantity,
               trunc(sum(gross) FILTER (WHERE \(moves)))::text AS gross_nanos,
               CASE WHEN count(*) FILTER (WHERE \(moves) AND gross IS NOT NULL AND tax IS NULL) = 0
                    THEN trunc(sum(tax) FILTER (WHERE \(moves) AND gross IS NOT NULL))::text
               END AS tax_nanos,
               count(*) FILTER (WHERE \(moves) AND gross IS NULL AND NOT replaced) AS unknown_amount,
               count(*) FILTER (WHERE entry = 'refund' AND NOT (\(moves))) AS family_revokes,
               count(*) FILTER (WHERE entry = 'refund' AND \(moves) AND NOT revoked) AS not_revoked,
               count(*) FILTER (WHERE entry = 'reversal') AS reversed,
               count(*) FILTER (WHERE entry = 'restated' AND NOT replaced) AS restated
        FROM rounded
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
        ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
        """
    }

    /// One row per entry, in booking order, for `--detail`. `price_nanos` is the sale's own price in the entry's
    /// currency, rounded to its minor unit: Apple's signed `price` (the total for the quantity bought), Google's
    /// order total from the Orders API; `NULL` when storerecon does not know it in that currency. Apple's price is
    /// known whatever the refund's amount (a family revoke's, a prorated refund's without its percentage).
    static func detailQuery(_ basis: RefundReportOptions.Basis) -> String {
        """
        \(roundedEntries(basis))
        SELECT e.entry, e.booked_at, to_char((e.booked_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') AS day,
               e.refunded_at, e.recorded_at, e.reversed_at, e.platform, e.app_id, e.order_id, e.part_key,
               e.original_id, e.product_id, e.reason_code, e.reason_label, e.refund_type, e.sign * e.quantity AS quantity,
               e.percentage_milli, e.currency, e.buyer_country, e.amount_source, e.amount_note, e.environment,
               trunc(e.gross)::text AS gross_nanos, trunc(e.tax)::text AS tax_nanos,
               trunc(report_round_half_even(
                   CASE WHEN e.platform = 'apple' AND e.amount_source IS DISTINCT FROM 'configured'
                        THEN e.price_milli::numeric * 1000000
                        WHEN o.status = 'ok' AND o.currency = e.currency THEN o.total_nanos::numeric
                   END, coalesce(e.exponent, 9)))::text AS price_nanos
        FROM rounded e
        LEFT JOIN google_order o ON e.platform = 'google' AND o.app_id = e.app_id AND o.order_id = e.order_id
        ORDER BY e.booked_at, e.app_id, e.order_id, e.part_key, e.entry, e.change_id NULLS FIRST, e.replaced DESC
        """
    }

    /// Refunds per day and platform (the chart), with the entries whose amount is unknown and those whose store
    /// states no tax (the report's notes).
    static func dailyQuery(_ basis: RefundReportOptions.Basis) -> String {
        """
        WITH \(entries(basis))
        SELECT to_char((booked_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') AS day, platform,
               count(*) FILTER (WHERE entry = 'refund' AND \(moves)) AS refunds,
               count(*) FILTER (WHERE \(moves) AND gross_exact IS NULL AND NOT replaced) AS unknown_amount,
               count(*) FILTER (WHERE \(moves) AND gross_exact IS NOT NULL AND tax_exact IS NULL) AS tax_unstated
        FROM entry
        GROUP BY 1, 2
        ORDER BY 1, 2
        """
    }
}
