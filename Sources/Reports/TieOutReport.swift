import Foundation
import Postgres

/// The month's refunds tied out against the stores' financial reports: Google per order, Apple per product x
/// country x currency over the report's own period. Read from one snapshot; never writes.
///
/// Amounts are exact nanos, compared and printed in the currency's minor unit (half to even), positive for money
/// given back. `difference` is ledger minus report.
public struct TieOutReport: Sendable, Encodable {
    /// One compared line: a Google order, or an Apple product x country x currency.
    public struct Line: Sendable, Encodable, Equatable {
        public var store: String
        public var app: String
        public var currency: String
        /// Google orderId (empty for Apple).
        public var orderId: String
        public var product: String
        public var country: String
        /// Refunds in the ledger (Apple: units, a prorated refund one unit).
        public var ledgerRefunds: Int
        /// Refunded money in the ledger (Google net of tax, Apple customer price), nanos; `nil` when unknown.
        public var ledgerNanos: Int64?
        /// Refund rows (Google `Charge refund`) or units (Apple `R` quantity, negated) in the report.
        public var reportRefunds: Int
        /// Refunded money in the report (Google `Charge refund` negated, Apple units x customer price), nanos.
        public var reportNanos: Int64?
        public var status: TieOut.Status
        public var cause: TieOut.Cause?
    }

    /// Totals of one store and currency.
    public struct Total: Sendable, Encodable, Equatable {
        public var store: String
        public var currency: String
        public var lines: Int
        public var matched: Int
        public var differing: Int
        /// Sum of the lines' rounded ledger amounts (unknown ones left out).
        public var ledgerNanos: Decimal
        /// Sum of the lines' rounded report amounts.
        public var reportNanos: Decimal
    }

    /// What the month's refunds cost in payouts, in the merchant currency the report carries: Google `Charge
    /// refund` + `Google fee refund` + `Tax refund`, Apple's negative Extended Partner Share; positive for money
    /// the developer did not get.
    public struct PayoutCost: Sendable, Encodable, Equatable {
        public var store: String
        public var app: String
        public var currency: String
        public var nanos: Decimal
    }

    /// A report the tie-out used.
    public struct SourceReport: Sendable, Encodable, Equatable {
        public var store: String
        public var app: String
        public var periodStart: String
        public var periodEnd: String
        public var sourceName: String
        public var rows: Int
    }

    /// `YYYY-MM`.
    public var month: String
    /// Whether the lines are printed (`--detail`); JSON carries them only then.
    public var detail: Bool
    /// The compared lines, Google first, then Apple.
    public var lines: [Line]
    /// Totals per store and currency.
    public var totals: [Total]
    /// Refunds' cost in payouts per store, app and merchant currency.
    public var payoutCosts: [PayoutCost]
    /// The reports used.
    public var reports: [SourceReport]
    /// Apps with no report loaded for the month (`sync payouts` or `import payouts` first).
    public var missingReports: [String]

    /// How many lines are not `matched`.
    public var differing: Int { lines.filter { $0.status != .matched }.count }

    enum CodingKeys: String, CodingKey {
        case month, lines, totals, payoutCosts = "payout_costs", reports, missingReports = "missing_reports"
        case differing
    }

    /// The JSON form (amounts printed in major units, lines only with `--detail`).
    public func encode(to encoder: any Encoder) throws {
        try JSONForm(self).encode(to: encoder)
    }

    /// Runs the tie-out of `month` (`YYYY-MM`) for `apps` (empty: all) of each platform in one read-only snapshot.
    /// - Parameter platforms: app id to `google` or `apple`, for the apps to tie out.
    /// - Throws: ``ReportError`` for a malformed month; `PostgresError`.
    public static func run(
        month: String, apps: [String: String], detail: Bool, on connection: PostgresConnection
    ) throws -> TieOutReport {
        guard month.range(of: #"^[0-9]{4}-(0[1-9]|1[0-2])$"#, options: .regularExpression) != nil else {
            throw ReportError("--month \(month): expected YYYY-MM")
        }
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { _ = try? connection.execute("ROLLBACK") }
        var report = TieOutReport(
            month: month, detail: detail, lines: [], totals: [], payoutCosts: [], reports: [], missingReports: [])
        for (app, platform) in apps.sorted(by: { $0.key < $1.key }) {
            let reports = try sourceReports(app: app, store: platform, month: month, on: connection)
            guard !reports.isEmpty else {
                report.missingReports.append(app)
                continue
            }
            report.reports += reports
            if platform == "google" {
                report.lines += try GoogleTieOut(app: app, month: month, connection: connection).lines()
            } else if let period = reports.first {
                report.lines += try AppleTieOut(app: app, period: period, connection: connection).lines()
            }
            report.payoutCosts += try payoutCosts(app: app, store: platform, month: month, on: connection)
        }
        report.totals = totals(of: report.lines)
        return report
    }

    static func sourceReports(
        app: String, store: String, month: String, on connection: PostgresConnection
    ) throws -> [SourceReport] {
        try connection.query(
            """
            SELECT store, app_id, period_start::text AS period_start, period_end::text AS period_end, source_name,
                   row_count
            FROM payout_report WHERE app_id = $1 AND store = $2 AND month = $3 ORDER BY report_key
            """, [app, store, month]
        ).map { row in
            SourceReport(
                store: try row.decode("store"), app: try row.decode("app_id"),
                periodStart: try row.decode("period_start"), periodEnd: try row.decode("period_end"),
                sourceName: try row.decode("source_name"), rows: try row.decode("row_count"))
        }
    }

    static func payoutCosts(
        app: String, store: String, month: String, on connection: PostgresConnection
    ) throws -> [PayoutCost] {
        let kinds = store == "google" ? ["Charge refund", "Google fee refund", "Tax refund"] : ["R"]
        return try connection.query(
            """
            SELECT r.merchant_currency AS currency, (-sum(r.merchant_nanos))::text AS nanos
            FROM payout_report p JOIN payout_report_row r ON r.report_id = p.id
            WHERE p.app_id = $1 AND p.store = $2 AND p.month = $3 AND r.kind = ANY ($4::text[])
                  AND r.merchant_currency IS NOT NULL
            GROUP BY 1 ORDER BY 1
            """, [app, store, month, PostgresTextArray(kinds)]
        ).map { row in
            PayoutCost(
                store: store, app: app, currency: try row.decode("currency"),
                nanos: Money.nanos(text: try row.decode("nanos")) ?? 0)
        }
    }

    /// Per store and currency: counts by status and the sums of the rounded amounts.
    static func totals(of lines: [Line]) -> [Total] {
        var totals: [String: Total] = [:]
        for line in lines {
            let key = "\(line.store) \(line.currency)"
            var total =
                totals[key]
                ?? Total(
                    store: line.store, currency: line.currency, lines: 0, matched: 0, differing: 0, ledgerNanos: 0,
                    reportNanos: 0)
            total.lines += 1
            if line.status == .matched { total.matched += 1 } else { total.differing += 1 }
            total.ledgerNanos += Decimal(line.ledgerNanos.map { TieOutAmount.rounded($0, line.currency) } ?? 0)
            total.reportNanos += Decimal(line.reportNanos.map { TieOutAmount.rounded($0, line.currency) } ?? 0)
            totals[key] = total
        }
        return totals.keys.sorted().compactMap { totals[$0] }
    }

    /// Whether two amounts agree in `currency`'s minor unit.
    static func agree(_ first: Int64, _ second: Int64, _ currency: String) -> Bool {
        TieOutAmount.rounded(first, currency) == TieOutAmount.rounded(second, currency)
    }
}
