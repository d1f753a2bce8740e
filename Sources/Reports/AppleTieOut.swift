import Foundation
import Ledger
import Postgres

/// Apple's tie-out of one app over one FINANCIAL report's own period (Apple's fiscal month, from the rows' Start and
/// End Date), per product x country x currency: the ledger's refunds (units, customer money) against the report's
/// `R` rows. Apple's rows are aggregates without transaction ids, so nothing finer can be matched.
struct AppleTieOut {
    let app: String
    let period: TieOutReport.SourceReport
    let connection: PostgresConnection

    /// One key's side in the ledger.
    struct LedgerSide {
        var units = 0
        var nanos: Int64 = 0
        var unknown = 0
        var edge = false
        var familyRevokes = 0
        var reversed = 0
    }

    /// One key's side in the report.
    struct ReportSide {
        var units: Int
        var nanos: Int64
    }

    func lines() throws -> [TieOutReport.Line] {
        let ledger = try ledgerSides()
        let report = try reportSides()
        var lines: [TieOutReport.Line] = []
        for key in Set(ledger.keys).union(report.keys).sorted() {
            if let line = Self.compare(key: key, ledger: ledger[key], report: report[key], app: app) {
                lines.append(line)
            }
        }
        return lines
    }

    /// Compares one product x country x currency (`nil` when neither side moved money or units).
    static func compare(key: String, ledger: LedgerSide?, report: ReportSide?, app: String) -> TieOutReport.Line? {
        let parts = key.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init)
        let units = ledger?.units ?? 0
        guard units > 0 || (ledger?.unknown ?? 0) > 0 || report != nil else { return nil }
        let currency = parts[2]
        let ledgerNanos = (ledger?.unknown ?? 0) > 0 ? nil : Int64?(ledger?.nanos ?? 0)
        let agree =
            ledgerNanos.map { TieOutReport.agree($0, report?.nanos ?? 0, currency) } == true
            && units == (report?.units ?? 0)
        var cause: TieOut.Cause?
        if !agree, let ledger {
            cause =
                ledger.reversed > 0
                ? .reversal : ledger.edge ? .periodEdge : ledger.familyRevokes > 0 ? .familyRevoke : nil
        }
        return TieOutReport.Line(
            store: "apple", app: app, currency: currency, orderId: "", product: parts[0], country: parts[1],
            ledgerRefunds: units, ledgerNanos: ledgerNanos, reportRefunds: report?.units ?? 0,
            reportNanos: report?.nanos, status: agree ? .matched : .differs, cause: cause)
    }

    static func key(_ product: String, _ country: String, _ currency: String) -> String {
        [product, country, currency].joined(separator: "\u{1}")
    }

    /// The ledger's production refunds dated within the period (US Pacific), and those a day beyond its edges.
    func ledgerSides() throws -> [String: LedgerSide] {
        let rows = try connection.query(
            """
            SELECT coalesce(product_id, '') AS product, coalesce(payload->>'storefront', '') AS storefront,
                   coalesce(currency, '') AS currency,
                   to_char((refunded_at AT TIME ZONE 'America/Los_Angeles')::date, 'YYYY-MM-DD') AS day,
                   refund_type, quantity, reversed_at IS NOT NULL AS reversed,
                   trunc(gross_amount::numeric * (10::numeric ^ (9 - amount_precision)))::text AS gross_nanos
            FROM refund
            WHERE app_id = $1 AND platform = 'apple' AND coalesce(environment, '') NOT ILIKE 'sandbox'
              AND refunded_at >= (($2::date - 1)::timestamp AT TIME ZONE 'America/Los_Angeles')
              AND refunded_at < (($3::date + 2)::timestamp AT TIME ZONE 'America/Los_Angeles')
            """, [app, period.periodStart, period.periodEnd])
        let before = try dayShift(period.periodStart, by: -1)
        let after = try dayShift(period.periodEnd, by: 1)
        var sides: [String: LedgerSide] = [:]
        for row in rows {
            let storefront: String = try row.decode("storefront")
            let key = Self.key(
                try row.decode("product"), CountryCode.alpha2(fromAlpha3: storefront) ?? storefront,
                try row.decode("currency"))
            let day: String = try row.decode("day")
            var side = sides[key] ?? LedgerSide()
            let outside = day == before || day == after
            side.edge = side.edge || outside || day == period.periodStart || day == period.periodEnd
            if !outside {
                let type: String = try row.decode("refund_type")
                let quantity: Int = try row.decode("quantity")
                let units = type == "prorated" ? 1 : quantity
                let currency: String = try row.decode("currency")
                let gross = try row.decodeIfPresent("gross_nanos", as: String.self).flatMap(TieOutAmount.parse)
                if try row.decode("reversed", as: Bool.self) {
                    side.reversed += 1
                } else if type == "family_revoke" {
                    side.familyRevokes += 1
                } else if let gross {
                    // Apple books each refund at its customer price in the currency's minor unit: round per refund.
                    side.units += units
                    side.nanos += TieOutAmount.rounded(gross, currency)
                } else {
                    side.unknown += 1
                    side.units += units
                }
            }
            sides[key] = side
        }
        return sides
    }

    /// The report's `R` rows per product x country x customer currency: units (negated) and units x price.
    func reportSides() throws -> [String: ReportSide] {
        let rows = try connection.query(
            """
            SELECT coalesce(r.product_id, '') AS product, coalesce(r.country, '') AS country,
                   r.amount_currency AS currency, (-sum(r.quantity))::int AS units,
                   sum(abs(r.quantity)::numeric * abs(r.amount_nanos))::text AS nanos
            FROM payout_report p JOIN payout_report_row r ON r.report_id = p.id
            WHERE p.app_id = $1 AND p.store = 'apple' AND p.source_name = $2 AND r.kind = 'R'
            GROUP BY 1, 2, 3
            """, [app, period.sourceName])
        var sides: [String: ReportSide] = [:]
        for row in rows {
            let key = Self.key(try row.decode("product"), try row.decode("country"), try row.decode("currency"))
            sides[key] = ReportSide(
                units: try row.decode("units"), nanos: TieOutAmount.parse(try row.decode("nanos")) ?? 0)
        }
        return sides
    }

    /// `day` (`YYYY-MM-DD`) moved by `delta` days, by the database's calendar.
    private func dayShift(_ day: String, by delta: Int) throws -> String {
        try connection.query("SELECT ($1::date + $2::int)::text AS day", [day, delta])[0].decode("day")
    }
}
