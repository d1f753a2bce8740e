import Foundation

extension TieOutReport {
    /// A one-page summary a controller can print: totals per store and currency, the payout cost of refunds, the
    /// reports used, and (with `--detail`) every line that is not matched.
    public func html() -> String {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        func table(_ rows: [[String]]) -> String {
            guard let header = rows.first else { return "" }
            return "<table><thead><tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr></thead><tbody>"
                + rows.dropFirst().map { "<tr>" + $0.map { "<td>\(escape($0))</td>" }.joined() + "</tr>" }.joined()
                + "</tbody></table>\n"
        }
        var body = "<h1>Refund tie-out \(escape(month))</h1>\n"
        body +=
            "<p>\(lines.count) lines, \(differing) not matched. Amounts in major units, positive for money given "
            + "back; difference = ledger − report.</p>\n"
        for app in missingReports {
            body += "<p class=\"missing\">No financial report loaded for \(escape(app)).</p>\n"
        }
        body += "<h2>Totals</h2>\n" + table([Self.totalColumns] + totals.map(Self.cells))
        if !payoutCosts.isEmpty {
            body += "<h2>What refunds cost in payouts</h2>\n"
            body += table(
                [["store", "app", "currency", "cost"]]
                    + payoutCosts.map { [$0.store, $0.app, $0.currency, Self.amount($0.nanos, $0.currency)] })
        }
        body += "<h2>Reports</h2>\n"
        body += table(
            [["store", "app", "period", "source", "rows"]]
                + reports.map {
                    [$0.store, $0.app, "\($0.periodStart) – \($0.periodEnd)", $0.sourceName, String($0.rows)]
                })
        if detail {
            body += "<h2>Lines not matched</h2>\n"
            body += table([Self.detailColumns] + lines.filter { $0.status != .matched }.map(Self.cells))
        }
        let style =
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
            + "td,th{border:1px solid #999;padding:2px 6px;text-align:left}.missing{color:#a00}"
            + "@media print{body{margin:0}}"
        return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Refund tie-out \(escape(month))</title>"
            + "<style>\(style)</style></head><body>\n\(body)</body></html>\n"
    }
}
