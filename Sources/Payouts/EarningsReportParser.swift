import Foundation
import StoreCalendar

/// Parses a Google Play earnings report: a zip of one CSV (`PlayApps_YYYYMM*.csv`), header row, one row per
/// transaction line of an order (`Charge`, `Google fee`, `Charge refund`, ...).
///
/// See `shared/stores.md` ("Google Play earnings reports") and
/// [Play Console: financial reports](https://support.google.com/googleplay/android-developer/answer/6135870).
public enum EarningsReportParser {
    /// The columns, in the order Google writes them.
    public static let columns = [
        "Description", "Transaction Date", "Transaction Time", "Tax Type", "Transaction Type", "Refund Type",
        "Product Title", "Product id", "Product Type", "Sku Id", "Hardware", "Buyer Country", "Buyer State",
        "Buyer Postal Code", "Buyer Currency", "Amount (Buyer Currency)", "Currency Conversion Rate",
        "Merchant Currency", "Amount (Merchant Currency)", "Base Plan ID", "Offer ID",
    ]

    /// Parses an earnings zip.
    /// - Parameters:
    ///   - archive: the zip's bytes.
    ///   - name: the object or file name (`earnings/earnings_202610_1234-1.zip`); its month names the report's.
    ///   - generation: the Cloud Storage generation, when fetched.
    /// - Throws: ``PayoutError`` (`.badFile`) naming the file, line and column of the first problem.
    public static func parse(zip archive: Data, name: String, generation: String? = nil) throws -> PayoutReport {
        let entry = try ZipArchive.singleEntry(of: archive, file: name)
        let rows = try parseCSV(entry.data, file: "\(name) (\(entry.name))")
        var report = header(
            name: name, month: try month(name: name, rows: rows, file: name), archive: archive, generation: generation)
        report.rows = rows
        return report
    }

    /// Reads an earnings zip row by row, when its name tells the month (`earnings_YYYYMM_...`, as Google names
    /// them); `nil` otherwise (``parse(zip:name:generation:)`` then learns the month from the rows).
    /// - Throws: ``PayoutError`` (`.badFile`) for a damaged zip; the rows throw for a bad row.
    public static func stream(zip archive: Data, name: String, generation: String? = nil) throws -> PayoutStream? {
        guard let month = month(inName: name) else { return nil }
        let entry = try ZipArchive.singleEntry(of: archive, file: name)
        let file = "\(name) (\(entry.name))"
        return PayoutStream(header: header(name: name, month: month, archive: archive, generation: generation)) {
            body in try forEachRow(entry.data, file: file, body)
        }
    }

    private static func header(name: String, month: CalendarMonth, archive: Data, generation: String?) -> PayoutReport {
        let (start, end) = (month.firstDay.description, month.lastDay.description)
        let fileName = String(name.split(separator: "/").last ?? Substring(name))
        return PayoutReport(
            store: .google, reportKey: fileName, month: month, periodStart: start, periodEnd: end, sourceName: name,
            checksum: PayoutReport.checksum(of: archive), generation: generation, file: archive, rows: [])
    }

    /// Parses the CSV inside the zip.
    static func parseCSV(_ data: Data, file: String) throws -> [PayoutRow] {
        var rows: [PayoutRow] = []
        try forEachRow(data, file: file) { rows.append($0) }
        return rows
    }

    /// Calls `body` with each row of the CSV, in file order.
    static func forEachRow(_ data: Data, file: String, _ body: (PayoutRow) throws -> Void) throws {
        var columns: [String: Int]?
        try DelimitedText(data, separator: 0x2C, quoting: true, file: file).forEachRecord { record in
            guard let known = columns else {
                columns = try header(record, file: file)
                return
            }
            if record.isBlankLine { return }
            try body(try row(ReportFields(file: file, line: record.line, columns: known, record: record)))
        }
        guard columns != nil else { throw PayoutError(.badFile, "the file is empty (no header row)", file: file) }
    }

    private static func header(_ record: DelimitedText.Record, file: String) throws -> [String: Int] {
        for (index, expected) in columns.enumerated() {
            let found = index < record.count ? record[index].trimmingCharacters(in: .whitespaces) : ""
            guard found == expected else {
                throw PayoutError(
                    .badFile, "wrong header: expected \"\(expected)\", found \"\(found.prefix(40))\"", file: file,
                    line: record.line, column: index + 1)
            }
        }
        return Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })
    }

    /// The columns the rows are read by, at their fixed places (the header must be exactly ``columns``).
    private enum Column: Int {
        case description = 0, transactionDate = 1, transactionTime = 2, transactionType = 4, refundType = 5
        case packageName = 7, skuId = 9, buyerCountry = 11, buyerCurrency = 14, amount = 15, merchantCurrency = 17
        case merchantAmount = 18

        static let all: [ReportFields.Column] = (0..<EarningsReportParser.columns.count).map {
            ReportFields.Column(name: EarningsReportParser.columns[$0], index: $0)
        }

        var field: ReportFields.Column { Self.all[rawValue] }
    }

    private static func row(_ fields: ReportFields) throws -> PayoutRow {
        guard fields.record.count >= columns.count else {
            throw PayoutError(
                .badFile, "expected \(columns.count) fields, found \(fields.record.count)", file: fields.file,
                line: fields.line)
        }
        let order = fields.text(Column.description.field)
        guard !order.isEmpty else { throw fields.error(Column.description.field, "the order id is empty") }
        let kind = fields.text(Column.transactionType.field)
        guard !kind.isEmpty else { throw fields.error(Column.transactionType.field, "empty") }
        let date = fields.text(Column.transactionDate.field)
        let time = fields.text(Column.transactionTime.field)
        guard let booked = PacificCalendar.googleDate(date, time: time) else {
            throw fields.error(
                Column.transactionDate.field,
                "expected a date like \"Oct 3, 2026\" and a time like \"4:05:06 AM PDT\", "
                    + "found \"\(date.prefix(20))\" \"\(time.prefix(20))\"")
        }
        return PayoutRow(
            line: fields.line, kind: kind, orderId: order, productId: fields.optional(Column.skuId.field),
            country: try fields.country(Column.buyerCountry.field), bookedAt: booked,
            refundType: fields.optional(Column.refundType.field),
            amountCurrency: try fields.currency(Column.buyerCurrency.field),
            amountNanos: try fields.nanos(Column.amount.field),
            merchantCurrency: try fields.currency(Column.merchantCurrency.field),
            merchantNanos: try fields.nanos(Column.merchantAmount.field),
            package: fields.optional(Column.packageName.field))
    }

    /// The month from the name (`earnings_202610_...`), else from the rows' Pacific dates.
    static func month(name: String, rows: [PayoutRow], file: String) throws -> CalendarMonth {
        if let month = month(inName: name) { return month }
        guard let first = rows.first?.bookedAt else {
            throw PayoutError(
                .badFile, "cannot tell the report's month: no rows, and the name is not earnings_YYYYMM_...",
                file: file)
        }
        return CalendarMonth(pacificMonthOf: first)
    }

    /// The month of an `earnings_YYYYMM_...` name, or `nil`.
    static func month(inName name: String) -> CalendarMonth? {
        guard let range = name.range(of: #"earnings_[0-9]{6}"#, options: .regularExpression) else { return nil }
        let digits = name[range].suffix(6)
        return try? CalendarMonth("\(digits.prefix(4))-\(digits.suffix(2))")
    }
}
