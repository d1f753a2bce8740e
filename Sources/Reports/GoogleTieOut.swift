import Foundation
import Postgres

/// Google's tie-out of one app and month, per order: the ledger's refunds (net of tax, buyer currency, bucketed by
/// US-Pacific day) against the earnings report's `Charge refund` rows of the order, negated.
///
/// A refund on the month's last day that Google booked in the next month is `ledger_only` (`settlement_lag`) here
/// and `matched` (`settlement_lag`) in the next month, where it is taken in when that month's report has it and the
/// previous one did not.
struct GoogleTieOut {
    let app: String
    let month: String
    let connection: PostgresConnection

    /// One order's side in the ledger.
    struct LedgerOrder {
        var product = ""
        var country = ""
        var currency = ""
        var refunds = 0
        var nanos: Int64? = 0
        var reversed = false
        var lastDay = false
        /// Of `nanos`: the refunds of the month's last day (Google may book them in the next month).
        var lastDayNanos: Int64 = 0
        var lateFromPrevious = false
    }

    /// One order's side in a report.
    struct ReportOrder {
        var product: String
        var country: String
        var currency: String
        var rows: Int
        var nanos: Int64
    }

    func lines() throws -> [TieOutReport.Line] {
        let (first, last) = Self.bounds(month)
        let previous = Self.shift(month, by: -1)
        let reports = try reportOrders(months: [previous, month, Self.shift(month, by: 1)])
        let current = reports[month] ?? [:]
        let previousReport = reports[previous] ?? [:]
        let ledger = try ledgerOrders(first: first, last: last, current: current, previous: previousReport)
        let reportOnly = current.keys.filter { ledger[$0] == nil }
        let (everRefunded, known) = try history(of: reportOnly)
        var lines: [TieOutReport.Line] = []
        for order in Set(ledger.keys).union(current.keys).sorted() {
            let line = Self.compare(
                order: order, ledger: ledger[order], report: current[order], everRefunded: everRefunded.contains(order),
                known: known.contains(order), app: app)
            if let line { lines.append(line) }
        }
        return lines
    }

    /// Compares one order's two sides (`nil` when neither side has a standing refund or a report row).
    static func compare(
        order: String, ledger: LedgerOrder?, report: ReportOrder?, everRefunded: Bool, known: Bool, app: String
    ) -> TieOutReport.Line? {
        // A refund that moved nothing (a void after parts had refunded every unit) has nothing to tie out.
        let standing = ledger.map { $0.refunds > 0 && $0.nanos != 0 } ?? false
        guard standing || report != nil else { return nil }
        var line = TieOutReport.Line(
            store: "google", app: app, currency: ledger?.currency ?? report?.currency ?? "", orderId: order,
            product: nonEmpty(ledger?.product) ?? report?.product ?? "",
            country: nonEmpty(ledger?.country) ?? report?.country ?? "", ledgerRefunds: ledger?.refunds ?? 0,
            ledgerNanos: standing ? ledger?.nanos : 0, reportRefunds: report?.rows ?? 0, reportNanos: report?.nanos,
            status: .matched, cause: nil)
        if let report, standing, let ledger {
            if ledger.nanos == nil {
                (line.status, line.cause) = (.amountDiffers, .unpriced)
            } else if ledger.currency != report.currency
                || !TieOutReport.agree(ledger.nanos ?? 0, report.nanos, report.currency)
            {
                let lag =
                    ledger.lastDayNanos != 0
                    && TieOutReport.agree((ledger.nanos ?? 0) - ledger.lastDayNanos, report.nanos, report.currency)
                (line.status, line.cause) = (.amountDiffers, lag ? .settlementLag : ledger.reversed ? .reversal : nil)
            } else {
                line.cause = ledger.lateFromPrevious ? .settlementLag : nil
            }
        } else if let ledger, standing {
            line.status = .ledgerOnly
            line.cause = ledger.lastDay ? .settlementLag : ledger.nanos == nil ? .unpriced : nil
        } else {
            line.status = .reportOnly
            line.cause =
                ledger?.reversed == true ? .reversal : everRefunded ? .otherMonth : known ? nil : .notRevokedUnseen
        }
        return line
    }

    private static func nonEmpty(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }

    /// The ledger's refunds of the month per order, with the previous month's last-day refunds that Google booked
    /// in this month.
    func ledgerOrders(
        first: String, last: String, current: [String: ReportOrder], previous: [String: ReportOrder]
    ) throws -> [String: LedgerOrder] {
        let rows = try connection.query(
            """
            SELECT order_id, coalesce(product_id, '') AS product, coalesce(buyer_country, '') AS country,
                   coalesce(currency, '') AS currency,
                   to_char((refunded_at AT TIME ZONE 'America/Los_Angeles')::date, 'YYYY-MM-DD') AS day,
                   reversed_at IS NOT NULL AS reversed,
                   trunc(gross_amount::numeric * (10::numeric ^ (9 - amount_precision)))::text AS gross_nanos,
                   trunc(coalesce(tax_amount, 0)::numeric * (10::numeric ^ (9 - amount_precision)))::text AS tax_nanos
            FROM refund
            WHERE app_id = $1 AND platform = 'google' AND refund_type <> 'family_revoke'
              AND refunded_at >= (($2::date - 1)::timestamp AT TIME ZONE 'America/Los_Angeles')
              AND refunded_at < (($3::date + 1)::timestamp AT TIME ZONE 'America/Los_Angeles')
            ORDER BY refunded_at, order_id, part_key
            """, [app, first, last])
        let dayBefore = Self.dayBefore(first)
        var orders: [String: LedgerOrder] = [:]
        for row in rows {
            let order: String = try row.decode("order_id")
            let day: String = try row.decode("day")
            var late = false
            if day == dayBefore {
                // Last month's last day: this month's only if Google booked it here, not there.
                guard current[order] != nil, previous[order] == nil else { continue }
                late = true
            }
            var entry = orders[order] ?? LedgerOrder()
            entry.product = try row.decode("product")
            entry.country = try row.decode("country")
            entry.currency = try row.decode("currency")
            entry.lateFromPrevious = entry.lateFromPrevious || late
            if try row.decode("reversed", as: Bool.self) {
                entry.reversed = true
            } else {
                entry.refunds += 1
                entry.lastDay = entry.lastDay || day == last
                let gross = try row.decodeIfPresent("gross_nanos", as: String.self).flatMap(TieOutAmount.parse)
                let tax = try row.decodeIfPresent("tax_nanos", as: String.self).flatMap(TieOutAmount.parse) ?? 0
                entry.nanos = gross.flatMap { gross in entry.nanos.map { $0 + gross - tax } }
                if day == last, let gross { entry.lastDayNanos += gross - tax }
            }
            orders[order] = entry
        }
        return orders
    }

    /// The `Charge refund` rows of the app's reports of `months`, per month and order, negated.
    func reportOrders(months: [String]) throws -> [String: [String: ReportOrder]] {
        let rows = try connection.query(
            """
            SELECT p.month, r.order_id, min(coalesce(r.product_id, '')) AS product,
                   min(coalesce(r.country, '')) AS country, min(r.amount_currency) AS currency, count(*) AS n,
                   (-sum(r.amount_nanos))::text AS nanos
            FROM payout_report p JOIN payout_report_row r ON r.report_id = p.id
            WHERE p.app_id = $1 AND p.store = 'google' AND p.month = ANY ($2::text[]) AND r.kind = 'Charge refund'
            GROUP BY 1, 2
            """, [app, PostgresTextArray(months)])
        var result: [String: [String: ReportOrder]] = [:]
        for row in rows {
            let order = ReportOrder(
                product: try row.decode("product"), country: try row.decode("country"),
                currency: try row.decode("currency"), rows: try row.decode("n"),
                nanos: TieOutAmount.parse(try row.decode("nanos")) ?? 0)
            let month: String = try row.decode("month")
            let id: String = try row.decode("order_id")
            result[month, default: [:]][id] = order
        }
        return result
    }

    /// Of `orders`: those the ledger ever refunded, and those storerecon knows (a ledger row or an order it read).
    func history(of orders: [String]) throws -> (refunded: Set<String>, known: Set<String>) {
        guard !orders.isEmpty else { return ([], []) }
        let refunded = try connection.query(
            "SELECT DISTINCT order_id FROM refund WHERE app_id = $1 AND order_id = ANY ($2::text[])",
            [app, PostgresTextArray(orders)]
        ).map { try $0.decode("order_id", as: String.self) }
        let read = try connection.query(
            "SELECT order_id FROM google_order WHERE app_id = $1 AND order_id = ANY ($2::text[])",
            [app, PostgresTextArray(orders)]
        ).map { try $0.decode("order_id", as: String.self) }
        return (Set(refunded), Set(refunded).union(read))
    }

    /// The first and last day of `month`.
    static func bounds(_ month: String) -> (String, String) {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        let (year, number) = (parts[0], parts[1])
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][number - 1]
        return (String(format: "%04d-%02d-01", year, number), String(format: "%04d-%02d-%02d", year, number, days))
    }

    /// `month` moved by `delta` months.
    static func shift(_ month: String, by delta: Int) -> String {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        let index = parts[0] * 12 + parts[1] - 1 + delta
        return String(format: "%04d-%02d", index / 12, index % 12 + 1)
    }

    /// The day before `day` (`YYYY-MM-01` only: the previous month's last day).
    static func dayBefore(_ day: String) -> String {
        bounds(shift(String(day.prefix(7)), by: -1)).1
    }
}
