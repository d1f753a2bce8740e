import Foundation
import StoreCalendar
import Testing

@testable import Payouts

@Suite struct FinanceReportParserTests {
    @Test func readsTheRowsAndTakesThePeriodFromThem() throws {
        let report = try FinanceReportParser.parse(
            gzip: try Fixture.data("financial-ZZ-2025-10.txt.gz"), name: "financial-ZZ-2025-10.txt.gz")
        #expect(report.store == .apple)
        // 09/28/2025-10/25/2025 is Apple's fiscal October: the month of the End Date.
        #expect(report.periodStart == "2025-09-28" && report.periodEnd == "2025-10-25")
        #expect(report.month == CalendarMonth(year: 2025, month: 10))
        #expect(report.reportKey == "FINANCIAL:ZZ:2025-09-28:2025-10-25")
        #expect(report.rows.count == 4)
        let sale = report.rows[0]
        #expect(sale.kind == "S" && sale.quantity == 10 && sale.merchantNanos == 69_900_000_000)
        let refund = report.rows[1]
        #expect(refund.line == 3)
        #expect(refund.kind == "R" && refund.quantity == -2)
        #expect(refund.productId == "premium.monthly" && refund.country == "US")
        #expect(refund.amountCurrency == "USD" && refund.amountNanos == 9_990_000_000)
        #expect(refund.merchantCurrency == "USD" && refund.merchantNanos == -13_980_000_000)
        #expect(report.rows[3].amountCurrency == "EUR" && report.rows[3].country == "DE")
        #expect(report.file == (try Fixture.data("financial-ZZ-2025-10.txt.gz")))
        let text = try Inflater.inflate(try Fixture.data("financial-ZZ-2025-10.txt.gz"), format: .gzip, file: "f")
        var records: [Int: [String]] = [:]
        try DelimitedText(text, separator: 0x09, quoting: false, file: "f").forEachRecord {
            records[$0.line] = $0.fields
        }
        #expect(records[3]?.count == 22 && records[3]?[10] == "1234567890")
    }

    @Test(arguments: [
        ("financial-wrong-header.txt.gz", 1, nil as Int?, "no \"Customer Currency\" column"),
        ("financial-unknown-currency.txt.gz", 3, 22, "unknown currency \"USX\""),
        ("financial-not-a-number.txt.gz", 3, 6, "Quantity: expected a whole number, found \"-2.5\""),
    ])
    func badFilesNameTheLineAndColumn(file: String, line: Int, column: Int?, problem: String) throws {
        let error = try #require(throws: PayoutError.self) {
            try FinanceReportParser.parse(gzip: try Fixture.data(file), name: file)
        }
        #expect(error.code == .badFile)
        #expect(error.line == line && error.column == column)
        #expect(error.description.hasPrefix(file))
        #expect(error.description.contains(problem), "\(error)")
    }

    /// A count of rows written grouped (`1,234`) is the number it groups.
    @Test func aGroupedRowCountIsRead() throws {
        let text = String(
            decoding: try Inflater.inflate(try Fixture.data("financial-ZZ-2025-10.txt.gz"), format: .gzip, file: "f"),
            as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let blank = try #require(lines.firstIndex(of: ""))
        lines.insert(contentsOf: Array(repeating: lines[blank - 1], count: 1230), at: blank)
        let grouped = lines.joined(separator: "\n").replacingOccurrences(of: "Total_Rows\t4", with: "Total_Rows\t1,234")
        let report = try FinanceReportParser.parse(text: Data(grouped.utf8), name: "f")
        #expect(report.rows.count == 1234)
    }

    /// A trailer that follows the rows without a blank line (older files do) is still the trailer.
    @Test func aTrailerWithoutTheBlankLineBeforeItIsRead() throws {
        let text = String(
            decoding: try Inflater.inflate(try Fixture.data("financial-ZZ-2025-10.txt.gz"), format: .gzip, file: "f"),
            as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let blank = try #require(lines.firstIndex(of: ""))
        #expect(lines[blank + 1].hasPrefix("Total_Rows"))
        lines.remove(at: blank)
        let report = try FinanceReportParser.parse(text: Data(lines.joined(separator: "\n").utf8), name: "f")
        #expect(report.rows.count == 4 && report.periodEnd == "2025-10-25")
    }

    /// An amount past what a line holds (9.2 billion in the report's currency, e.g. a month of a popular product in
    /// IDR) is refused as that, with its line and column, not as a malformed number.
    @Test func anAmountTooLargeForALineIsSaidAsSuch() throws {
        let text = String(
            decoding: try Inflater.inflate(try Fixture.data("financial-ZZ-2025-10.txt.gz"), format: .gzip, file: "f"),
            as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let column = try #require(lines[0].split(separator: "\t").firstIndex(of: "Extended Partner Share"))
        func share(_ amount: String) -> Data {
            var fields = lines[1].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            fields[column] = amount
            var changed = lines
            changed[1] = fields.joined(separator: "\t")
            return Data(changed.joined(separator: "\n").utf8)
        }
        let fits = try FinanceReportParser.parse(text: share("950000000.00"), name: "f")
        #expect(fits.rows[0].merchantNanos == 950_000_000_000_000_000)
        let error = try #require(throws: PayoutError.self) {
            try FinanceReportParser.parse(text: share("9500000000.00"), name: "f")
        }
        #expect(error.line == 2 && error.column == column + 1, "\(error)")
        #expect(error.message.contains("is beyond the 9,223,372,036.854775807"), "\(error)")
    }

    @Test func rowsMissingBeforeTheTrailerAreATruncatedReport() throws {
        let error = try #require(throws: PayoutError.self) {
            try FinanceReportParser.parse(gzip: try Fixture.data("financial-missing-rows.txt.gz"), name: "f.gz")
        }
        #expect(error.description == "f.gz: Total_Rows says 4 rows, the file has 3: the report is truncated")
    }

    @Test(arguments: [8, 60, 200])
    func aTruncatedGzipIsRefused(cut: Int) throws {
        let data = try Fixture.data("financial-ZZ-2025-10.txt.gz")
        let error = try #require(throws: PayoutError.self) {
            try FinanceReportParser.parse(gzip: data.prefix(data.count - cut), name: "f.gz")
        }
        #expect(error.code == .badFile)
        #expect(error.description.hasPrefix("f.gz"))
        #expect(error.description.contains("truncated") || error.description.contains("damaged"), "\(error)")
    }

    /// The fiscal month is the calendar month of the period's middle day, so a five-week month that ends in the
    /// next calendar month (Apple's fiscal April 2021: 03/28-05/01) is not filed under it.
    @Test(arguments: [
        ("2021-03-28", "2021-05-01", "2021-04"), ("2025-09-28", "2025-10-25", "2025-10"),
        ("2025-11-23", "2025-12-27", "2025-12"), ("2025-09-28", "2025-11-01", "2025-10"),
        ("2025-12-28", "2026-01-31", "2026-01"),
    ])
    func theFiscalMonthIsTheMonthOfThePeriodsMiddle(_ start: String, _ end: String, _ month: String) throws {
        #expect(try FinanceReportParser.fiscalMonth((start, end), file: "f").description == month)
    }

    @Test func aZipIsNotAnAppleReport() throws {
        let error = try #require(throws: PayoutError.self) {
            try PayoutFile.parse(try Fixture.data("earnings_202610_1234567890-1.zip"), name: "e.zip", store: .apple)
        }
        #expect(error.description.contains("expected an Apple FINANCIAL report"))
    }
}
