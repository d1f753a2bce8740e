extension GoogleTieOut {
    /// An order's lines: one, or two when the ledger's amount is in another currency than Google's refund (a
    /// configured estimate in the product's only configured currency), so that each currency's totals hold only money
    /// of that currency. A report-only line is in the report's currency.
    func lines(_ sides: Sides) -> [TieOutReport.Line] {
        guard var line = compare(sides) else { return [] }
        let (ledger, report) = (sides.ledgerCurrency, sides.reportCurrency)
        if line.status == .reportOnly, !report.isEmpty { line.currency = report }
        guard line.status != .reportOnly, sides.inReport, !ledger.isEmpty, !report.isEmpty, ledger != report else {
            return [line]
        }
        var ledgerSide = line
        ledgerSide.status = .amountDiffers
        (ledgerSide.cause, ledgerSide.note) =
            sides.estimated
            ? (.estimated, "in \(ledger); Google refunded \(report): " + Self.estimatedNote)
            : (nil, "in \(ledger); Google refunded \(report)")
        var reportSide = ledgerSide
        (ledgerSide.reportRefunds, ledgerSide.reportNanos) = (0, nil)
        (reportSide.currency, reportSide.ledgerRefunds, reportSide.ledgerNanos) = (report, 0, 0)
        return [ledgerSide, reportSide]
    }
}
