import Foundation
import Reports
import Testing

/// `--environment all`: Apple's test money is told apart from real money in the rows, the totals (each currency
/// per environment), the converted totals and the money chart; it is never added to it.
@Suite("RefundReport: --environment all")
struct RefundReportEnvironmentTests {
    @Test func testMoneyIsGroupedAndTotalledApart() throws {
        let ledger = try ReportLedger(prefix: "envall")
        defer { ledger.connection.close() }
        try ledger.insert([
            .init(order: "t1", refundedAt: "2026-11-01T10:00:00Z", gross: 10990),
            .init(order: "t2", refundedAt: "2026-11-01T11:00:00Z", gross: 4990, environment: "Sandbox"),
            .init(order: "t3", refundedAt: "2026-11-01T12:00:00Z", gross: 1990, environment: "Production"),
        ])
        let rates = try RefundRates.parse("date,currency,rate_to_EUR\n2026-11-01,USD,0.5\n")
        let options = RefundReportOptions(
            from: "2026-11-01", to: "2026-11-01", by: [.platform], rates: rates, environment: .all)
        #expect(options.by == [.platform, .currency, .source, .environment])
        let report = try RefundReport.run(options, on: ledger.connection, money: true)
        let totals = report.totalsByCurrency().map { ($0.1.keys["environment"], $0.1.grossNanos) }
        #expect(totals.count == 2)
        #expect(totals.contains { $0.0 == "production" && $0.1 == Decimal(12_980_000_000) })
        #expect(totals.contains { $0.0 == "sandbox" && $0.1 == Decimal(4_990_000_000) })
        let converted = report.convertedTotals().map { ($0.1.keys["environment"], $0.1.convertedGrossNanos) }
        #expect(converted.count == 2 && converted.contains { $0.0 == "sandbox" && $0.1 == Decimal(2_500_000_000) })
        #expect(report.csv().contains("apple,USD,store,sandbox,1,1,4.99,"), "\(report.csv())")
        let totalLines = report.table().split(separator: "\n").filter { $0.hasPrefix("TOTAL ") && $0.contains("USD") }
        #expect(totalLines.count == 2 && totalLines.contains { $0.contains("sandbox") && $0.contains("4.99") })
        let parts = Set(report.dailyMoney.map(\.platform))
        #expect(parts == ["apple", "apple sandbox"])
        // Production alone, the default, has neither the column nor the test refund.
        let production = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-01", by: [.platform]), on: ledger.connection)
        #expect(!production.options.by.contains(.environment))
        #expect(production.totalsByCurrency().map(\.1.grossNanos) == [Decimal(12_980_000_000)])
    }
}
