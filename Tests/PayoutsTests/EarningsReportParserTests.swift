import Foundation
import StoreCalendar
import Testing

@testable import Payouts

@Suite struct EarningsReportParserTests {
    static let name = "earnings/earnings_202610_1234567890-1.zip"

    @Test func readsEveryRowWithItsValuesAndThePacificMonth() throws {
        let report = try EarningsReportParser.parse(
            zip: try Fixture.data("earnings_202610_1234567890-1.zip"), name: Self.name, generation: "17")
        #expect(report.store == .google)
        #expect(report.month == CalendarMonth(year: 2026, month: 10))
        #expect(report.periodStart == "2026-10-01" && report.periodEnd == "2026-10-31")
        #expect(report.reportKey == "earnings_202610_1234567890-1.zip")
        #expect(report.generation == "17")
        #expect(report.rows.count == 6)
        #expect(report.rows.map(\.line) == [2, 3, 4, 5, 6, 7])
        let refund = report.rows[2]
        #expect(refund.kind == "Charge refund")
        #expect(refund.orderId == "GPA.1111-2222-3333-44444")
        #expect(refund.refundType == "Full")
        #expect(refund.amountCurrency == "USD" && refund.amountNanos == -4_990_000_000)
        #expect(refund.merchantCurrency == "USD" && refund.merchantNanos == -4_990_000_000)
        #expect(refund.productId == "pro_monthly" && refund.country == "US")
        #expect(refund.package == "com.acme.app", "the account's file holds every app's rows")
        // Oct 20, 2026 11:30:00 PM PDT (UTC-7) is 06:30 UTC the next day.
        #expect(refund.bookedAt == Date(timeIntervalSince1970: 1_792_564_200))
        let coins = report.rows[4]
        #expect(coins.orderId == "GPA.5555-6666-7777-88888..1")
        #expect(coins.amountCurrency == "JPY" && coins.amountNanos == -500_000_000_000)
        #expect(coins.merchantNanos == -3_350_000_000)
        // 11:59:59 PM PDT on Oct 31 is Nov 1 in UTC but still October in the Pacific month.
        #expect(CalendarMonth(pacificMonthOf: try #require(coins.bookedAt)) == CalendarMonth(year: 2026, month: 10))
        #expect(report.rows[5].kind == "Rebill adjustment")
        #expect(report.file == (try Fixture.data("earnings_202610_1234567890-1.zip")))
        // The values the rows do not read stay in the file: line 6's title, line 7's 21 values.
        let records = try Fixture.records(ofZip: "earnings_202610_1234567890-1.zip")
        #expect(records[6]?[6] == "Coins, 500")
        #expect(records[7]?.count == 21)
    }

    @Test func theChecksumIsTheZipsSHA256() throws {
        let data = try Fixture.data("earnings_202610_1234567890-1.zip")
        let report = try EarningsReportParser.parse(zip: data, name: Self.name)
        #expect(report.checksum.count == 64)
        var changed = data
        changed[changed.count - 1] ^= 0xFF
        #expect(PayoutReport.checksum(of: changed) != report.checksum)
    }

    @Test(arguments: [
        ("earnings-wrong-header.zip", 1, 5, "expected \"Transaction Type\""),
        ("earnings-unknown-currency.zip", 3, 15, "unknown currency \"XXY\""),
        ("earnings-not-a-number.zip", 4, 16, "expected a decimal number, found \"-4.99x\""),
    ])
    func badFilesNameTheLineAndColumn(file: String, line: Int, column: Int, problem: String) throws {
        let error = try #require(throws: PayoutError.self) {
            try EarningsReportParser.parse(zip: try Fixture.data(file), name: file)
        }
        #expect(error.code == .badFile)
        #expect(error.line == line && error.column == column)
        #expect(error.description.hasPrefix(file))
        #expect(error.description.contains(problem), "\(error)")
    }

    @Test(arguments: [30, 200, 500])
    func aTruncatedZipIsRefused(cut: Int) throws {
        let data = try Fixture.data("earnings_202610_1234567890-1.zip")
        let error = try #require(throws: PayoutError.self) {
            try EarningsReportParser.parse(zip: data.prefix(data.count - cut), name: "cut.zip")
        }
        #expect(error.code == .badFile)
        #expect(error.description.contains("cut.zip"))
        #expect(error.description.contains("truncated"), "\(error)")
    }

    @Test func aFileThatIsNotAZipIsRefused() throws {
        let error = try #require(throws: PayoutError.self) {
            try PayoutFile.parse(Data("Description,Transaction Date\n".utf8), name: "x.csv", store: .google)
        }
        #expect(error.description == "x.csv: expected a Google earnings zip (earnings_YYYYMM_*.zip)")
    }

    @Test func decimalsBecomeExactNanos() {
        #expect(ReportFields.nanos("-4.99") == -4_990_000_000)
        #expect(ReportFields.nanos("1200") == 1_200_000_000_000)
        #expect(ReportFields.nanos("0.123456789") == 123_456_789)
        #expect(ReportFields.nanos(".5") == 500_000_000)
        #expect(ReportFields.nanos("1.2345678901") == nil)
        #expect(ReportFields.nanos("1,200.00") == nil)
        #expect(ReportFields.nanos("1e3") == nil)
        #expect(ReportFields.nanos("-") == nil)
        #expect(ReportFields.nanos("") == nil)
        #expect(ReportFields.nanos("99999999999") == nil)
    }
}
