import Foundation
import StoreCalendar

/// Parses an Apple FINANCIAL report (App Store Connect `financeReports`, region ZZ): a gzip of tab-separated rows,
/// then a blank line and trailer lines (`Total_Rows`, `Total_Amount`, `Total_Units`).
///
/// Rows are aggregates (product x country x price x sale/return) over an Apple fiscal month whose dates are the
/// rows' `Start Date` and `End Date`. See `shared/stores.md` ("Apple financial reports") and
/// [Download Finance Reports](https://developer.apple.com/documentation/appstoreconnectapi/get-v1-financereports).
public enum FinanceReportParser {
    /// The columns the tie-out reads; the others stay in the file, kept whole.
    public static let requiredColumns = [
        "Start Date", "End Date", "Vendor Identifier", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Sales or Return", "Country Of Sale", "Customer Price", "Customer Currency",
    ]

    /// Parses a gzip as App Store Connect sends it (or as downloaded by hand).
    /// - Throws: ``PayoutError`` (`.badFile`) naming the file, line and column of the first problem.
    public static func parse(gzip data: Data, name: String) throws -> PayoutReport {
        let text = try Inflater.inflate(data, format: .gzip, file: name)
        var report = try parse(text: text, name: name)
        report.checksum = PayoutReport.checksum(of: data)
        report.file = data
        return report
    }

    /// Parses the tab-separated text.
    static func parse(text: Data, name: String) throws -> PayoutReport {
        var columns: [String: Int]?
        var rows: [PayoutRow] = []
        var trailer: [String: String] = [:]
        var inTrailer = false
        var period: (start: String, end: String)?
        try DelimitedText(text, separator: 0x09, quoting: false, file: name).forEachRecord { record in
            guard let known = columns else {
                columns = try header(record, file: name)
                return
            }
            if record.fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
                inTrailer = true
                return
            }
            // Older files put the trailer right after the rows, without the blank line.
            if !inTrailer, record.fields[0].hasPrefix("Total_") { inTrailer = true }
            if inTrailer {
                trailer[record.fields[0]] = record.fields.count > 1 ? record.fields[1] : ""
                return
            }
            let fields = ReportFields(file: name, line: record.line, columns: known, record: record)
            let (row, rowPeriod) = try row(fields)
            if let period, period != rowPeriod {
                throw fields.error(
                    "Start Date",
                    "the period \(rowPeriod.start)..\(rowPeriod.end) differs from the first row's "
                        + "\(period.start)..\(period.end)")
            }
            period = rowPeriod
            rows.append(row)
        }
        guard columns != nil else { throw PayoutError(.badFile, "the file is empty (no header row)", file: name) }
        guard let totalRows = trailer["Total_Rows"] else {
            throw PayoutError(.badFile, "no Total_Rows trailer after the rows: the report is truncated", file: name)
        }
        // A grouped count (`1,234`) is read as the number it groups.
        let counted = totalRows.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: "")
        guard Int(counted) == rows.count else {
            throw PayoutError(
                .badFile, "Total_Rows says \(totalRows) rows, the file has \(rows.count): the report is truncated",
                file: name)
        }
        guard let period else {
            throw PayoutError(.badFile, "no rows: the report's period cannot be told", file: name)
        }
        return PayoutReport(
            store: .apple, reportKey: "FINANCIAL:ZZ:\(period.start):\(period.end)",
            month: try fiscalMonth(period, file: name),
            periodStart: period.start, periodEnd: period.end, sourceName: name,
            checksum: PayoutReport.checksum(of: text), file: text, rows: rows)
    }

    /// The fiscal month a period is: the calendar month of its middle day. A fiscal month is four or five weeks that
    /// begin and end within a week of its calendar month's bounds, so its middle always falls in it, whichever month
    /// of a quarter has five weeks (a five-week month ends in the next calendar month: its end date would misname it).
    static func fiscalMonth(_ period: (start: String, end: String), file: String) throws -> CalendarMonth {
        guard let start = CivilDate(iso: period.start), let end = CivilDate(iso: period.end), start <= end else {
            throw PayoutError(.badFile, "the period \(period.start)..\(period.end) is not a span of days", file: file)
        }
        let middle = start.adding(days: (end.daysSinceEpoch - start.daysSinceEpoch) / 2)
        return CalendarMonth(year: middle.year, month: middle.month)
    }

    private static func header(_ record: DelimitedText.Record, file: String) throws -> [String: Int] {
        var columns: [String: Int] = [:]
        for (index, name) in record.fields.enumerated() {
            columns[name.trimmingCharacters(in: .whitespaces)] = index
        }
        if let missing = requiredColumns.first(where: { columns[$0] == nil }) {
            throw PayoutError(
                .badFile,
                "wrong header: no \"\(missing)\" column (found \"\(record.fields.prefix(3).joined(separator: ", "))...\")",
                file: file, line: record.line)
        }
        return columns
    }

    private static func row(_ fields: ReportFields) throws -> (PayoutRow, (start: String, end: String)) {
        guard let start = PacificCalendar.appleDay(fields.text("Start Date")) else {
            throw fields.error("Start Date", "expected MM/DD/YYYY, found \"\(fields.text("Start Date").prefix(20))\"")
        }
        guard let end = PacificCalendar.appleDay(fields.text("End Date")) else {
            throw fields.error("End Date", "expected MM/DD/YYYY, found \"\(fields.text("End Date").prefix(20))\"")
        }
        let kind = fields.text("Sales or Return")
        guard kind == "S" || kind == "R" else {
            throw fields.error("Sales or Return", "expected S or R, found \"\(kind.prefix(10))\"")
        }
        guard let product = fields.optional("Vendor Identifier") else {
            throw fields.error("Vendor Identifier", "the product id is empty")
        }
        let row = PayoutRow(
            line: fields.line, kind: kind, productId: product, country: try fields.country("Country Of Sale"),
            quantity: try fields.integer("Quantity"), amountCurrency: try fields.currency("Customer Currency"),
            amountNanos: try fields.nanos("Customer Price"),
            merchantCurrency: try fields.currency("Partner Share Currency"),
            merchantNanos: try fields.nanos("Extended Partner Share"))
        return (row, (start, end))
    }
}
