import Foundation
import Postgres

extension RefundReport {
    /// Money refunded on one day by one platform in one currency (the HTML page's money charts).
    public struct MoneyPoint: Sendable, Equatable {
        public var day: String
        public var platform: String
        public var currency: String
        /// The refunds' gross (tax included), each rounded to the currency's minor unit, in nanos.
        public var grossNanos: Decimal
    }

    /// What the money charts add up: refunds with a store amount (estimates and reversals left out, as the count
    /// chart leaves reversals out), per day of the range in the report's zone, platform and currency.
    static func moneyQuery(_ basis: RefundReportOptions.Basis) -> String {
        """
        \(roundedEntries(basis))
        SELECT to_char((booked_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') AS day,
               -- With --environment all, test money is a part of its own.
               CASE WHEN $5 = 'all' AND environment <> 'production' THEN platform || ' ' || environment
                    ELSE platform END AS platform,
               upper(currency) AS currency, trunc(sum(gross))::text AS gross_nanos
        FROM rounded
        WHERE entry = 'refund' AND \(moves) AND amount_source = 'store' AND gross IS NOT NULL
          AND currency IS NOT NULL
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
        """
    }

    /// The money charts' series, read in the report's snapshot.
    static func moneyPoints(_ options: RefundReportOptions, on connection: PostgresConnection) throws -> [MoneyPoint] {
        try connection.query(moneyQuery(options.basis), rangeParameters(options) + roundingParameters).map { row in
            MoneyPoint(
                day: try row.decode("day"), platform: try row.decode("platform"),
                currency: try row.decode("currency"), grossNanos: try nanos(row, "gross_nanos") ?? 0)
        }
    }

    /// One chart per currency of money refunded per period (store amounts, gross), stacked by platform, each on
    /// its own scale in the currency's major units (``moneyChartsNote``).
    func moneyChartsSVG() -> String {
        var svg = ""
        for currency in Set(dailyMoney.map(\.currency)).sorted() {
            let points = dailyMoney.filter { $0.currency == currency }
            let exponent = Money.exponent(of: currency) ?? 2
            let perMinor = Money.power(9 - exponent)
            let minor = points.map { point in
                (point.day, point.platform, Int(truncating: NSDecimalNumber(decimal: point.grossNanos / perMinor)))
            }
            let (period, bars) = chartBars(minor)
            let unit = Int(truncating: NSDecimalNumber(decimal: Money.power(exponent)))
            let scale = ChartScale(unit: unit, width: 280, height: 160) { value in
                Money.format(nanos: Decimal(value) * perMinor, currency: currency) + " " + currency
            }
            svg += Self.barChartSVG(
                caption: "\(currency) refunded per \(period.rawValue)", bars: bars,
                segments: Array(Set(points.map(\.platform))).sorted(), scale: scale)
        }
        return svg
    }

    /// What the money charts show, said once above them.
    static let moneyChartsNote =
        "Money charts: per currency, the gross (tax included) of the refunds with a store amount, stacked by store, "
        + "in the currency's major units; estimates and reversals are in the tables, not the charts"
}
