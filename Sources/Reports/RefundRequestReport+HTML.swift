import Foundation
import Postgres
import StoreCalendar

extension RefundRequestReport {
    /// The outcomes of the chart, in stacking order, with their colours: the store's decision once known, else
    /// what storerecon did (`missed`, `not_answered`: no facts, no consent, not supported or refused), else `open`.
    public static let chartOutcomes: [(name: String, colour: String)] = [
        ("refunded", "#d9534f"), ("declined", "#3aa757"), ("pending", "#4a78c2"), ("missed", "#f0ad4e"),
        ("not_answered", "#999999"), ("open", "#cccccc"),
    ]

    /// Requests received per day in `timeZone` (`reports.timeZone`) in `[from, to)` and outcome (``chartOutcomes``).
    public static func daily(
        from: Date, to: Date, timeZone: String = "UTC",
        environment: RefundReportOptions.EnvironmentFilter = .production, on connection: PostgresConnection
    ) throws -> [(day: String, outcome: String, requests: Int)] {
        try connection.query(
            """
            SELECT to_char((received_at AT TIME ZONE $3)::date, 'YYYY-MM-DD') AS day,
                   coalesce(decision, CASE WHEN answer = 'missed' THEN 'missed' WHEN answer IS NULL THEN 'open'
                                           ELSE 'not_answered' END) AS outcome, count(*)::int AS requests
            FROM refund_request WHERE received_at >= $1 AND received_at < $2
                \(environmentFilter(appEnvironment("refund_request"), parameter: 4))
            GROUP BY 1, 2 ORDER BY 1, 2
            """, [from, to, timeZone, environment.rawValue]
        ).map { (try $0.decode("day"), try $0.decode("outcome"), try $0.decode("requests")) }
    }

    /// The instants a report of the days `first` ... `last` (`YYYY-MM-DD`, inclusive) in `timeZone` spans, and its
    /// days; `nil` when a day does not exist, `first` is after `last` or the zone is unknown. A day is that zone's
    /// (23 or 25 hours across a DST change), as in `report refunds`.
    public static func days(
        _ first: String, _ last: String, timeZone: String
    ) -> (from: Date, to: Date, days: [String])? {
        guard let zone = TimeZone(identifier: timeZone), let first = CivilDate(iso: first),
            let last = CivilDate(iso: last), first <= last
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        func start(_ day: CivilDate) -> Date? {
            calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))
        }
        guard let from = start(first), let to = start(last.adding(days: 1)) else { return nil }
        let days = (0...(last.daysSinceEpoch - first.daysSinceEpoch)).map { first.adding(days: $0).description }
        return (from, to, days)
    }

    /// The report as one HTML page: the counts, the money per currency and a chart of requests per day by outcome
    /// (inline SVG, no script, nothing fetched).
    public func html(
        daily: [(day: String, outcome: String, requests: Int)], days: [String], title: String
    ) -> String {
        func table(_ rows: [[String]]) -> String {
            var html = "<table>\n"
            for (index, row) in rows.enumerated() {
                let cell = index == 0 ? "th" : "td"
                html += "<tr>" + row.map { "<\(cell)>\(RefundReport.escape($0))</\(cell)>" }.joined() + "</tr>\n"
            }
            return html + "</table>\n"
        }
        let header = dimensions.map(\.rawValue) + Self.counts
        let total = ["total"] + Array(repeating: "", count: max(0, dimensions.count - 1)) + totals.map(String.init)
        let rows = groups.map { $0.keys + $0.counts.map(String.init) } + (dimensions.isEmpty ? [] : [total])
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(RefundReport.escape(title))</title>
            <style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}\
            .legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}</style></head><body>
            <h1>\(RefundReport.escape(title))</h1>
            \(Self.chartSVG(daily: daily, days: days))
            <h2>Requests</h2>
            \(table([header] + rows))
            <h2>Money refunded and kept</h2>
            \(table([Self.moneyColumns] + Self.moneyRows(money)))
            </body></html>

            """
    }

    /// A stacked bar per day of `days` (per week, month or year over a longer range, as the refund report's), a
    /// segment per outcome.
    static func chartSVG(daily: [(day: String, outcome: String, requests: Int)], days: [String]) -> String {
        let (period, bars) = RefundReport.chartBars(
            from: days.first ?? "", to: days.last ?? "", daily.map { ($0.day, $0.outcome, $0.requests) })
        return RefundReport.barChartSVG(
            caption: "Requests per \(period.rawValue) by outcome", bars: bars, segments: chartOutcomes.map(\.name),
            colours: Dictionary(uniqueKeysWithValues: chartOutcomes.map { ($0.name, $0.colour) }),
            scale: RefundReport.ChartScale(width: 600, height: 200))
    }
}
