import Foundation

extension TieOutReport {
    /// The detail columns, in order (documented in the README; spreadsheets depend on them).
    public static let detailColumns = [
        "store", "app", "currency", "order_id", "product", "country", "ledger_refunds", "ledger_amount",
        "report_refunds", "report_amount", "difference", "status", "cause",
    ]

    /// The totals columns, in order.
    public static let totalColumns = [
        "store", "currency", "lines", "matched", "differing", "ledger_amount", "report_amount", "difference",
    ]

    /// An amount in the currency's minor unit, or empty when unknown.
    static func amount(_ nanos: Decimal?, _ currency: String) -> String {
        nanos.map { Money.format(nanos: $0, currency: currency) } ?? ""
    }

    /// A line's amount in the currency's minor unit, or empty when unknown.
    static func amount(_ nanos: Int64?, _ currency: String) -> String {
        nanos.map { TieOutAmount.text($0, currency) } ?? ""
    }

    /// Ledger minus report, of the rounded amounts; empty when the ledger's is unknown.
    static func difference(_ line: Line) -> String {
        guard let ledger = line.ledgerNanos else { return "" }
        let report = line.reportNanos ?? 0
        return amount(
            TieOutAmount.rounded(ledger, line.currency) - TieOutAmount.rounded(report, line.currency), line.currency)
    }

    /// One detail line's cells.
    static func cells(_ line: Line) -> [String] {
        [
            line.store, line.app, line.currency, line.orderId, line.product, line.country, String(line.ledgerRefunds),
            amount(line.ledgerNanos, line.currency), String(line.reportRefunds),
            amount(line.reportNanos ?? (line.reportRefunds == 0 ? Int64(0) : nil), line.currency), difference(line),
            line.status.rawValue, line.cause?.rawValue ?? "",
        ]
    }

    /// One total's cells.
    static func cells(_ total: Total) -> [String] {
        [
            total.store, total.currency, String(total.lines), String(total.matched), String(total.differing),
            amount(total.ledgerNanos, total.currency), amount(total.reportNanos, total.currency),
            amount(total.ledgerNanos - total.reportNanos, total.currency),
        ]
    }

    /// CSV (RFC 4180): the detail lines with `--detail`, else the totals.
    public func csv() -> String {
        let rows = detail ? [Self.detailColumns] + lines.map(Self.cells) : [Self.totalColumns] + totals.map(Self.cells)
        return rows.map { $0.map(Self.csvField).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    static func csvField(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { ",\"\r\n".unicodeScalars.contains($0) }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// JSON: totals, payout costs, the reports used, and the lines with `--detail`; amounts as strings in major
    /// units.
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(JSONForm(self)), as: UTF8.self) + "\n"
    }

    /// A terminal table: totals, payout costs, then (with `--detail`) the lines.
    public func table() -> String {
        var text =
            "Tie-out \(month) (amounts in major units, positive for money given back; difference = ledger - report)\n"
        for app in missingReports { text += "no financial report loaded for \(app) in \(month)\n" }
        text += TextColumns.align([Self.totalColumns] + totals.map(Self.cells))
        if !payoutCosts.isEmpty {
            text += "\nRefunds' cost in payouts (merchant currency)\n"
            text += TextColumns.align(
                [["store", "app", "currency", "cost"]]
                    + payoutCosts.map { [$0.store, $0.app, $0.currency, Self.amount($0.nanos, $0.currency)] })
        }
        if detail {
            text += "\n" + TextColumns.align([Self.detailColumns] + lines.map(Self.cells))
        }
        return text
    }
}

/// The JSON shape: the report's values with amounts printed in major units.
struct JSONForm: Encodable {
    let report: TieOutReport

    init(_ report: TieOutReport) { self.report = report }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TieOutReport.CodingKeys.self)
        try container.encode(report.month, forKey: .month)
        try container.encode(report.differing, forKey: .differing)
        try container.encode(
            report.totals.map { total in
                Dictionary(uniqueKeysWithValues: zip(TieOutReport.totalColumns, TieOutReport.cells(total)))
            }, forKey: .totals)
        try container.encode(
            report.payoutCosts.map {
                [
                    "store": $0.store, "app": $0.app, "currency": $0.currency,
                    "cost": TieOutReport.amount($0.nanos, $0.currency),
                ]
            }, forKey: .payoutCosts)
        try container.encode(report.reports, forKey: .reports)
        try container.encode(report.missingReports, forKey: .missingReports)
        if report.detail {
            try container.encode(
                report.lines.map { line in
                    Dictionary(uniqueKeysWithValues: zip(TieOutReport.detailColumns, TieOutReport.cells(line)))
                }, forKey: .lines)
        }
    }
}
