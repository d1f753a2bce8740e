import Foundation
import StoreCalendar

extension TieOutReport {
    /// A one-page summary a controller can print: totals per store and currency and per cause, the payout cost of
    /// refunds in its merchant currency, the reports used, every line that is not matched (with `--detail`, every
    /// line) and the legend. Amounts and counts are aligned right.
    public func html() -> String {
        var body = "<h1>Refund tie-out \(Self.escape(month.description))</h1>\n"
        body +=
            "<p>\(counts). Amounts in major units, positive for money given back; difference = ledger − report.</p>\n"
        for app in missingReports {
            body += "<p class=\"missing\">No financial report loaded for \(Self.escape(app)).</p>\n"
        }
        body += "<h2>Totals</h2>\n" + Self.htmlTable(Self.totalColumns, totals.map(Self.cells))
        body += "<h2>Totals by cause</h2>\n" + Self.htmlTable(Self.causeColumns, causeTotals.map(Self.cells))
        if !payoutCosts.isEmpty {
            body += "<h2>What refunds cost in payouts (merchant currency)</h2>\n"
            body += Self.htmlTable(Self.costColumns, payoutCosts.map(Self.cells))
        }
        body += "<h2>Reports</h2>\n"
        body += Self.htmlTable(
            ["store", "app", "period", "source", "rows"],
            reports.map { [$0.store, $0.app, "\($0.periodStart) – \($0.periodEnd)", $0.sourceName, String($0.rows)] })
        let shown = detail ? lines : lines.filter { $0.status != .matched }
        body += "<h2>\(detail ? "Lines" : "Lines not matched") (\(shown.count))</h2>\n"
        body += Self.htmlTable(Self.detailColumns, shown.map(Self.cells))
        body += "<h2>Legend</h2>\n"
        body += Self.htmlTable(["kind", "name", "meaning"], TieOut.legend.map { [$0.kind, $0.name, $0.meaning] })
        let style =
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
            + "td,th{border:1px solid #999;padding:2px 6px;text-align:left;white-space:nowrap}"
            + "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}.missing{color:#a00}"
            + "@media print{body{margin:0}}"
        return
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Refund tie-out \(Self.escape(month.description))</title>"
            + "<style>\(style)</style></head><body>\n\(body)</body></html>\n"
    }

    static func escape(_ text: String) -> String {
        RefundReport.escape(text)
    }

    /// A table of `columns` and `rows`, counts and amounts aligned right.
    static func htmlTable(_ columns: [String], _ rows: [[String]]) -> String {
        let right = rightAligned(columns)
        func cell(_ tag: String, _ index: Int, _ text: String) -> String {
            "<\(tag)\(right.contains(index) ? " class=\"num\"" : "")>\(escape(text))</\(tag)>"
        }
        return "<table><thead><tr>" + columns.enumerated().map { cell("th", $0, $1) }.joined() + "</tr></thead><tbody>"
            + rows.map { "<tr>" + $0.enumerated().map { cell("td", $0, $1) }.joined() + "</tr>" }.joined()
            + "</tbody></table>\n"
    }
}
