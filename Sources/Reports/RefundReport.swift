import Foundation
import Postgres

/// The refund report: the ledger grouped (or listed) over a date range, read from one consistent snapshot.
///
/// Counts, quantities and amounts cover refunds that stand: a refund later reversed (Apple `REFUND_REVERSED`) is
/// netted out and counted under `reversed`. Amounts are what the stores say they refunded (Apple's signed
/// transaction, Google's Orders API; `source` `store`) or estimates from configured prices (`source`
/// `configured`, always grouped apart), summed exactly and rounded half to even to the currency's minor unit only
/// when printed (see ``Money``). Refunds whose amount is unknown are counted under `unknownAmount` and never summed
/// as zero; Apple family-sharing revocations move no money and are counted under `familyRevokes`.
public struct RefundReport: Sendable, Encodable {
    /// One group.
    public struct Group: Sendable, Encodable, Equatable {
        /// The grouping values, keyed by dimension name (`day`, `platform`, ...).
        public var keys: [String: String]
        /// Refunds that stand (not reversed).
        public var refunds: Int
        /// Units refunded (quantity-based partial refunds count their voided quantity).
        public var quantity: Int
        /// Sum of the known refunded amounts (tax included), exact nanos of `keys["currency"]`; `nil` when no
        /// refund of the group has a known amount.
        public var grossNanos: Decimal?
        /// Sum of the refunded tax, exact nanos; `nil` unless the store stated the tax of every refund counted in
        /// `grossNanos` (Google Orders API; Apple states none).
        public var taxNanos: Decimal?
        /// Standing refunds whose amount is unknown.
        public var unknownAmount: Int
        /// Apple family-sharing revocations: access removed, no money moved; never in `refunds` or the amounts.
        public var familyRevokes: Int = 0
        /// Of `refunds`: Google refunds made without revocation (seen in orders storerecon re-read, not in the
        /// voided list).
        public var notRevoked: Int = 0
        /// Refunds that were reversed, not counted above.
        public var reversed: Int
        /// With `--rates`: `grossNanos` converted to the rates' base currency, each day at that day's rate (exact
        /// nanos of the base currency).
        public var convertedGrossNanos: Decimal? = nil
        /// With `--rates`: `taxNanos` converted likewise (`nil` when the tax is not known).
        public var convertedTaxNanos: Decimal? = nil

        /// `grossNanos - taxNanos`, when both are known.
        public var netNanos: Decimal? {
            guard let grossNanos, let taxNanos else { return nil }
            return grossNanos - taxNanos
        }
    }

    /// One refund (`--detail`).
    public struct Detail: Sendable, Encodable, Equatable {
        public var refundedAt: Date
        public var day: String
        public var platform: String
        public var app: String
        public var orderId: String
        public var part: String
        public var originalId: String?
        public var product: String?
        public var reasonCode: Int?
        public var reason: String
        public var type: String
        public var quantity: Int
        public var percentageMilli: Int?
        public var priceMilli: Int64?
        /// The refunded amount (tax included), exact nanos; `nil` when unknown or when no money moved.
        public var grossNanos: Decimal?
        /// The refunded tax, exact nanos, when the store states it.
        public var taxNanos: Decimal?
        public var currency: String?
        /// The buyer's country (Google orders), ISO 3166-1 alpha-2.
        public var country: String?
        /// `store` (what the store said) or `configured` (estimated from configured prices); `nil` without amount.
        public var source: String?
        /// Why the amount is missing or provisional (`pending`, `order_not_found`, `family_revoke`, ...).
        public var note: String?
        public var reversedAt: Date?
        public var environment: String?
    }

    /// One rate `--rates` supplied and the report used.
    public struct RateUsed: Sendable, Encodable, Equatable {
        public var day: String
        public var currency: String
        public var rate: Decimal
    }

    /// What the Google figures can and cannot see, said beside every report.
    public static let googleCoverage =
        "Google: every refund Google revoked is seen (Voided Purchases); refunds without revocation only for orders "
        + "storerecon knows (subscriptions' current orders, orders read before), counted in not_revoked_refunds"

    /// Refunds per day per platform (standing ones), for the chart.
    public struct DailyPoint: Sendable, Encodable, Equatable {
        public var day: String
        public var platform: String
        public var refunds: Int
    }

    /// The request.
    public var options: RefundReportOptions
    /// Grouped rows (empty with `--detail`).
    public var groups: [Group]
    /// Detail rows (empty without `--detail`).
    public var details: [Detail]
    /// Chart series.
    public var daily: [DailyPoint]
    /// With `--rates`: the rates used, by day and currency.
    public var ratesUsed: [RateUsed] = []

    enum CodingKeys: String, CodingKey { case groups, details, daily }

    /// Runs the report in a read-only, repeatable-read transaction: every query sees the same snapshot and nothing
    /// is written.
    public static func run(_ options: RefundReportOptions, on connection: PostgresConnection) throws -> RefundReport {
        try options.validate()
        let zone = try connection.query(
            "SELECT count(*) AS n FROM pg_timezone_names WHERE name = $1", [options.timeZone])
        guard try zone[0].decode("n", as: Int.self) > 0 else {
            throw ReportError("time zone \(options.timeZone) is unknown to the database")
        }
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { _ = try? connection.execute("ROLLBACK") }
        var report = RefundReport(options: options, groups: [], details: [], daily: [])
        let range: [any PostgresEncodable] = [
            options.from, options.to, options.timeZone, PostgresTextArray(options.apps),
        ]
        if options.detail {
            report.details = try connection.query(detailQuery, range).map(Self.detail)
        } else {
            let flags = RefundReportOptions.Dimension.allCases.map { options.by.contains($0) }
            report.groups = try connection.query(groupQuery, range + flags).map { row in
                var keys: [String: String] = [:]
                for dimension in options.by {
                    keys[dimension.rawValue] = try row.decodeIfPresent(dimension.rawValue, as: String.self) ?? ""
                }
                return Group(
                    keys: keys, refunds: try row.decode("refunds"), quantity: try row.decode("quantity"),
                    grossNanos: try Self.nanos(row, "gross_nanos"), taxNanos: try Self.nanos(row, "tax_nanos"),
                    unknownAmount: try row.decode("unknown_amount"), familyRevokes: try row.decode("family_revokes"),
                    notRevoked: try row.decode("not_revoked"),
                    reversed: try row.decode("reversed"))
            }
            if let rates = options.rates {
                try report.convert(with: rates, range: range, on: connection)
            }
        }
        report.daily = try connection.query(dailyQuery, range).map { row in
            DailyPoint(
                day: try row.decode("day"), platform: try row.decode("platform"), refunds: try row.decode("refunds"))
        }
        return report
    }

    /// Converts every group's amounts to `rates.base`: the groups are read again split by day (and currency) and
    /// each day's sums are multiplied by that day's rate, exactly; rounding happens only when printed.
    /// - Throws: `ReportError` naming the first day and currency without a rate.
    mutating func convert(
        with rates: RefundRates, range: [any PostgresEncodable], on connection: PostgresConnection
    ) throws {
        let flags = RefundReportOptions.Dimension.allCases.map {
            options.by.contains($0) || $0 == .day || $0 == .currency
        }
        func key(_ values: [String]) -> String { values.joined(separator: "\u{1}") }
        var index: [String: Int] = [:]
        for (position, group) in groups.enumerated() {
            index[key(options.by.map { group.keys[$0.rawValue] ?? "" })] = position
            groups[position].convertedGrossNanos = group.grossNanos == nil ? nil : 0
            groups[position].convertedTaxNanos = group.taxNanos == nil ? nil : 0
        }
        var used: [String: RateUsed] = [:]
        for row in try connection.query(Self.groupQuery, range + flags) {
            guard let gross = try Self.nanos(row, "gross_nanos") else { continue }
            let values = try options.by.map { try row.decodeIfPresent($0.rawValue, as: String.self) ?? "" }
            guard let position = index[key(values)] else { continue }
            let day: String = try row.decode("day")
            let currency: String = try row.decode("currency")
            let rate = try rates.rate(day: day, currency: currency)
            if currency != rates.base {
                used["\(day) \(currency)"] = RateUsed(day: day, currency: currency, rate: rate)
            }
            groups[position].convertedGrossNanos = (groups[position].convertedGrossNanos ?? 0) + gross * rate
            if let tax = try Self.nanos(row, "tax_nanos"), groups[position].convertedTaxNanos != nil {
                groups[position].convertedTaxNanos = (groups[position].convertedTaxNanos ?? 0) + tax * rate
            }
        }
        ratesUsed = used.keys.sorted().compactMap { used[$0] }
    }

    /// A `numeric` column of exact nanos.
    static func nanos(_ row: PostgresRow, _ column: String) throws -> Decimal? {
        guard let text = try row.decodeIfPresent(column, as: String.self) else { return nil }
        guard let value = Money.nanos(text: text) else { throw ReportError("unexpected amount \(text) in \(column)") }
        return value
    }

    private static func detail(_ row: PostgresRow) throws -> Detail {
        Detail(
            refundedAt: try row.decode("refunded_at"), day: try row.decode("day"), platform: try row.decode("platform"),
            app: try row.decode("app_id"), orderId: try row.decode("order_id"), part: try row.decode("part_key"),
            originalId: try row.decodeIfPresent("original_id"), product: try row.decodeIfPresent("product_id"),
            reasonCode: try row.decodeIfPresent("reason_code"), reason: try row.decode("reason_label"),
            type: try row.decode("refund_type"), quantity: try row.decode("quantity"),
            percentageMilli: try row.decodeIfPresent("percentage_milli"),
            priceMilli: try row.decodeIfPresent("price_milli"), grossNanos: try nanos(row, "gross_nanos"),
            taxNanos: try nanos(row, "tax_nanos"), currency: try row.decodeIfPresent("currency"),
            country: try row.decodeIfPresent("buyer_country"), source: try row.decodeIfPresent("amount_source"),
            note: try row.decodeIfPresent("amount_note"), reversedAt: try row.decodeIfPresent("reversed_at"),
            environment: try row.decodeIfPresent("environment"))
    }

    // $1 from date, $2 to date (inclusive), $3 time zone, $4 app ids (empty: all). The range is computed in the
    // report's zone by PostgreSQL's own time-zone data, so DST days have their true length.
    static let rangeFilter = """
        refunded_at >= ($1::date::timestamp AT TIME ZONE $3)
        AND refunded_at < (($2::date + 1)::timestamp AT TIME ZONE $3)
        AND (cardinality($4::text[]) = 0 OR app_id = ANY ($4::text[]))
        """

    /// An amount column as exact nanos (`numeric`): the stored integer scaled from its precision to 9 digits.
    static func nanosSQL(_ column: String) -> String {
        "(\(column)::numeric * (10::numeric ^ (9 - amount_precision)))"
    }

    // Refunds that stand and moved money (a family revoke moves none).
    static let standing = "reversed_at IS NULL AND refund_type <> 'family_revoke'"

    // $5...$12: whether to group by day, platform, app, product, reason, currency, country, source (in
    // Dimension.allCases order). The grouping is chosen by parameters, not by building SQL text. Sums are exact
    // (`numeric`) and returned as integer nanos text; rounding happens in Swift when printing.
    static let groupQuery = """
        SELECT CASE WHEN $5 THEN to_char((refunded_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') END AS day,
               CASE WHEN $6 THEN platform END AS platform,
               CASE WHEN $7 THEN app_id END AS app,
               CASE WHEN $8 THEN coalesce(product_id, '') END AS product,
               CASE WHEN $9 THEN reason_label END AS reason,
               CASE WHEN $10 THEN coalesce(currency, 'unknown') END AS currency,
               CASE WHEN $11 THEN coalesce(buyer_country, '') END AS country,
               CASE WHEN $12 THEN coalesce(amount_source, 'none') END AS source,
               count(*) FILTER (WHERE \(standing)) AS refunds,
               coalesce(sum(quantity) FILTER (WHERE \(standing)), 0) AS quantity,
               trunc(sum(\(nanosSQL("gross_amount"))) FILTER (WHERE \(standing)))::text AS gross_nanos,
               CASE WHEN count(*) FILTER (WHERE \(standing) AND gross_amount IS NOT NULL AND tax_amount IS NULL) = 0
                    THEN trunc(sum(\(nanosSQL("tax_amount"))) FILTER (WHERE \(standing) AND gross_amount IS NOT NULL))::text
               END AS tax_nanos,
               count(*) FILTER (WHERE \(standing) AND gross_amount IS NULL) AS unknown_amount,
               count(*) FILTER (WHERE reversed_at IS NULL AND refund_type = 'family_revoke') AS family_revokes,
               count(*) FILTER (WHERE \(standing) AND NOT revoked) AS not_revoked,
               count(*) FILTER (WHERE reversed_at IS NOT NULL) AS reversed
        FROM refund
        WHERE \(rangeFilter)
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
        ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
        """

    static let detailQuery = """
        SELECT refunded_at, to_char((refunded_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') AS day, platform, app_id,
               order_id, part_key, original_id, product_id, reason_code, reason_label, refund_type, quantity,
               percentage_milli, price_milli, currency, reversed_at, environment, buyer_country, amount_source,
               amount_note, trunc(\(nanosSQL("gross_amount")))::text AS gross_nanos,
               trunc(\(nanosSQL("tax_amount")))::text AS tax_nanos
        FROM refund
        WHERE \(rangeFilter)
        ORDER BY refunded_at, app_id, order_id, part_key
        """

    static let dailyQuery = """
        SELECT to_char((refunded_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') AS day, platform,
               count(*) AS refunds
        FROM refund
        WHERE \(rangeFilter) AND reversed_at IS NULL
        GROUP BY 1, 2
        ORDER BY 1, 2
        """
}
