import Foundation

extension TieOutReport {
    /// The detail columns, in order (documented in docs/tie-out.md; spreadsheets depend on them).
    public static let detailColumns = [
        "store", "app", "currency", "order_id", "product", "country", "ledger_refunds", "ledger_amount",
        "report_refunds", "report_amount", "difference", "status", "cause", "note",
    ]

    /// The totals columns, in order.
    public static let totalColumns = [
        "store", "currency", "lines", "matched", "differing", "ledger_amount", "report_amount", "difference",
    ]

    /// The totals-by-cause columns, in order.
    public static let causeColumns = [
        "store", "currency", "status", "cause", "lines", "ledger_amount", "report_amount", "difference",
    ]

    /// The payout-cost columns, in order.
    public static let costColumns = ["store", "app", "merchant_currency", "cost"]

    /// Which columns hold counts (printed as JSON numbers) or amounts (aligned right).
    static let countColumns: Set<String> = ["ledger_refunds", "report_refunds", "lines", "matched", "differing"]
    static let amountColumns: Set<String> = ["ledger_amount", "report_amount", "difference", "cost"]

    /// The indexes of `columns` a table aligns right.
    static func rightAligned(_ columns: [String]) -> Set<Int> {
        Set(columns.indices.filter { countColumns.contains(columns[$0]) || amountColumns.contains(columns[$0]) })
    }

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
            line.status.rawValue, line.cause?.rawValue ?? "", line.note,
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

    /// One cause total's cells.
    static func cells(_ total: CauseTotal) -> [String] {
        [
            total.store, total.currency, total.status.rawValue, total.cause?.rawValue ?? "", String(total.lines),
            amount(total.ledgerNanos, total.currency), amount(total.reportNanos, total.currency),
            amount(total.ledgerNanos - total.reportNanos, total.currency),
        ]
    }

    /// One payout cost's cells.
    static func cells(_ cost: PayoutCost) -> [String] {
        [cost.store, cost.app, cost.currency, amount(cost.nanos, cost.currency)]
    }

    /// A CSV record (RFC 4180) with its line break.
    static func csvRecord(_ cells: [String]) -> String {
        cells.map(csvField).joined(separator: ",") + "\r\n"
    }

    static func csvField(_ value: String) -> String {
        let special: (UInt8) -> Bool = { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A || $0 == 0x23 }
        guard value.utf8.contains(where: special) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// What follows the CSV's lines: without `--detail` the totals, a blank line and the totals by cause; then the
    /// legend as comment lines (`# status matched: ...`).
    func csvTail() -> String {
        var text = ""
        if !detail {
            text += ([Self.totalColumns] + totals.map(Self.cells)).map(Self.csvRecord).joined()
            text += "\r\n" + ([Self.causeColumns] + causeTotals.map(Self.cells)).map(Self.csvRecord).joined()
        }
        return text + TieOut.legend.map { "# \($0.kind) \($0.name): \($0.meaning)\r\n" }.joined()
    }

    /// CSV: the detail lines with `--detail` (else the totals and the totals by cause), then the legend.
    public func csv() -> String {
        (detail ? Self.csvRecord(Self.detailColumns) + lines.map { Self.csvRecord(Self.cells($0)) }.joined() : "")
            + csvTail()
    }

    /// The table's title.
    var tableTitle: String {
        "Tie-out \(month) (amounts in major units, positive for money given back; difference = ledger - report)\n"
    }

    /// What follows the table's lines: apps without a report, the counts, totals, totals by cause, payout costs and
    /// the legend.
    func tableTail() -> String {
        var text = missingReports.map { "no financial report loaded for \($0) in \(month)\n" }.joined()
        text += "\n\(counts)\n"
        text +=
            "\nTotals\n"
            + TextColumns.align(
                [Self.totalColumns] + totals.map(Self.cells), right: Self.rightAligned(Self.totalColumns))
        text +=
            "\nBy cause\n"
            + TextColumns.align(
                [Self.causeColumns] + causeTotals.map(Self.cells), right: Self.rightAligned(Self.causeColumns))
        if !payoutCosts.isEmpty {
            text += "\nRefunds' cost in payouts (in each report's merchant currency)\n"
            text += TextColumns.align(
                [Self.costColumns] + payoutCosts.map(Self.cells), right: Self.rightAligned(Self.costColumns))
        }
        text +=
            "\nLegend\n"
            + TextColumns.align([["kind", "name", "meaning"]] + TieOut.legend.map { [$0.kind, $0.name, $0.meaning] })
        return text
    }

    /// A terminal table: (with `--detail`) the lines, then totals, totals by cause, payout costs and the legend.
    public func table() -> String {
        var text = tableTitle
        if detail {
            text += TextColumns.align(
                [Self.detailColumns] + lines.map(Self.cells), right: Self.rightAligned(Self.detailColumns))
        }
        return text + tableTail()
    }
}
