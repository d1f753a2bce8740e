import Foundation
import Reports
import Testing

/// An amount stored without its currency (a store's answer that named none) is an unknown amount: two such amounts
/// in different currencies must never be added into one figure.
@Suite("RefundReport: an amount without its currency")
struct RefundReportUnknownCurrencyTests {
    @Test func isCountedAsUnknownAndAddedToNothing() throws {
        let ledger = try ReportLedger(prefix: "nocurrency")
        defer { ledger.connection.close() }
        try ledger.insert([
            .init(order: "t1", refundedAt: "2026-11-01T10:00:00Z", gross: 10990, currency: nil),
            .init(order: "t2", refundedAt: "2026-11-01T11:00:00Z", gross: 120_000, currency: nil),
            .init(order: "t3", refundedAt: "2026-11-01T12:00:00Z", gross: 4990),
        ])
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-01", by: [.platform]), on: ledger.connection)
        let unknown = try #require(report.groups.first { $0.keys["currency"] == "unknown" })
        #expect(unknown.refunds == 2 && unknown.unknownAmount == 2 && unknown.grossNanos == nil)
        let usd = try #require(report.groups.first { $0.keys["currency"] == "USD" })
        #expect(usd.grossNanos == Decimal(4_990_000_000) && usd.unknownAmount == 0)
        #expect(report.totalsByCurrency().allSatisfy { $0.1.keys["currency"] != "unknown" || $0.1.grossNanos == nil })
    }
}
