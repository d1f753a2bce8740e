import Payouts
import StoreCalendar
import Testing

@testable import Reports

/// The month's last-day refunds against Google's next report, which books them: loaded or not yet.
extension TieOutReportTests {
    /// A last-day refund missing from its month's report is a settlement lag while the next month's report is not
    /// loaded, and booked late once it holds the refund; loaded without it, the difference has no cause.
    @Test func aLastDayRefundIsALagOnlyWhileTheNextMonthCanStillBookIt() throws {
        // L: 4.00 on Oct 31 (Pacific), not in October's report; M: 1.00 on Oct 12 and 2.00 on Oct 31, 1.00 in it.
        try ledger.google("GPA.L", "2026-11-01T05:00:00Z", gross: 4_000_000_000, part: "voided:1")
        try ledger.google("GPA.M", "2026-10-12T12:00:00Z", gross: 1_000_000_000, part: "voided:1")
        try ledger.google("GPA.M", "2026-11-01T05:00:00Z", gross: 2_000_000_000, part: "voided:2")
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [
                ("GPA.X", "Charge", 1_000_000_000, 1_000_000_000),
                ("GPA.M", "Charge refund", -1_000_000_000, -1_000_000_000),
            ])
        func october() throws -> [String] {
            try TieOutReport.run(
                month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection
            ).lines.map { "\($0.orderId) \($0.status.rawValue) \($0.cause?.rawValue ?? "-") \($0.note)" }
        }
        #expect(
            try october() == [
                "GPA.L ledger_only settlement_lag expected in Google's 2026-11 report",
                "GPA.M amount_differs settlement_lag expected in Google's 2026-11 report",
            ])
        try googleReport(
            month: CalendarMonth(year: 2026, month: 11), [("GPA.Y", "Charge", 1_000_000_000, 1_000_000_000)])
        #expect(
            try october() == [
                "GPA.L ledger_only - not in Google's 2026-11 report either", "GPA.M amount_differs - ",
            ])
    }

    /// Google books a refund in the month it processes it: a refund of Oct 29 that November's report refunds exactly
    /// is booked late, as a last-day one is; one that November refunds by another amount (a later refund of the
    /// order) is not, and neither is one of August that October's report holds. November's line of the Oct 29 refund
    /// names the month it came from.
    @Test func aRefundTheNextReportBooksWholeIsALagWhateverItsDay() throws {
        try ledger.google("GPA.N", "2026-10-29T18:00:00Z", gross: 2_000_000_000, part: "voided:1")
        try ledger.google("GPA.P", "2026-10-10T18:00:00Z", gross: 2_000_000_000, part: "voided:1")
        try ledger.google("GPA.O", "2026-08-12T18:00:00Z", gross: 3_000_000_000, part: "voided:1")
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10), [("GPA.O", "Charge refund", -3_000_000_000, -3_000_000_000)])
        try googleReport(
            month: CalendarMonth(year: 2026, month: 11),
            [
                ("GPA.N", "Charge refund", -2_000_000_000, -2_000_000_000),
                ("GPA.P", "Charge refund", -5_000_000_000, -5_000_000_000),
            ])
        func lines(_ month: Int) throws -> [String] {
            try TieOutReport.run(
                month: CalendarMonth(year: 2026, month: month), apps: ["droid": "google"], detail: true,
                on: connection
            ).lines.map { "\($0.orderId) \($0.status.rawValue) \($0.cause?.rawValue ?? "-") \($0.note)" }
        }
        #expect(
            try lines(10) == [
                "GPA.N ledger_only settlement_lag booked by Google in 2026-11",
                "GPA.O report_only other_month in the ledger of 2026-08",
                "GPA.P ledger_only - ",
            ])
        #expect(
            try lines(11) == [
                "GPA.N report_only other_month in the ledger of 2026-10",
                "GPA.P report_only other_month in the ledger of 2026-10",
            ])
    }

    /// An order refunded on the month's last day and on another: the next month's report booking only as much as the
    /// last day's refund leaves the other day's refund in neither month, so the line names no cause; booking the whole
    /// is a settlement lag.
    @Test func aLastDayRefundDoesNotExplainTheOrdersOtherRefundsOfTheMonth() throws {
        for order in ["GPA.V", "GPA.W"] {
            try ledger.google(order, "2026-10-10T18:00:00Z", gross: 4_000_000_000, part: "voided:1")
            try ledger.google(order, "2026-11-01T05:00:00Z", gross: 4_000_000_000, part: "voided:2")
        }
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10), [("GPA.X", "Charge", 1_000_000_000, 1_000_000_000)])
        try googleReport(
            month: CalendarMonth(year: 2026, month: 11),
            [
                ("GPA.V", "Charge refund", -8_000_000_000, -8_000_000_000),
                ("GPA.W", "Charge refund", -4_000_000_000, -4_000_000_000),
            ])
        let lines = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection
        ).lines.map { "\($0.orderId) \($0.status.rawValue) \($0.cause?.rawValue ?? "-") \($0.note)" }
        #expect(
            lines == [
                "GPA.V ledger_only settlement_lag booked by Google in 2026-11",
                "GPA.W ledger_only - Google's 2026-11 report refunds the order, not as much as the ledger did this month",
            ])
    }

    /// Google's earnings file is the developer account's: another app's rows in it are not this app's report-only
    /// lines, nor its money (rows stored before packages were kept still count, as before).
    @Test func anotherAppsRowsInTheAccountsFileAreNotThisAppsLines() throws {
        try ledger.google("GPA.A", "2026-10-10T18:00:00Z", gross: 2_000_000_000, part: "voided:1")
        let month = CalendarMonth(year: 2026, month: 10)
        let rows = [("GPA.A", "com.x", -2_000_000_000), ("GPA.OTHER", "com.other", -9_000_000_000)].enumerated()
            .map { index, row in
                PayoutRow(
                    line: index + 2, kind: "Charge refund", orderId: row.0, productId: "pro", country: "US",
                    bookedAt: nil, amountCurrency: "USD", amountNanos: Int64(row.2), merchantCurrency: "USD",
                    merchantNanos: Int64(row.2), package: row.1)
            }
        try PayoutStore(connection: connection).store(
            PayoutReport(
                store: .google, reportKey: "earnings_202610_1-1.zip", month: month, periodStart: "2026-10-01",
                periodEnd: "2026-10-31", sourceName: "earnings_202610_1-1.zip", checksum: "account", rows: rows),
            app: "droid")
        let report = try TieOutReport.run(month: month, apps: ["droid": "google"], detail: true, on: connection)
        #expect(report.lines.map { "\($0.orderId) \($0.status.rawValue)" } == ["GPA.A matched"])
        #expect(report.payoutCosts == [.init(store: "google", app: "droid", currency: "USD", nanos: 2_000_000_000)])
    }

    /// A line's sum beyond what the tie-out adds exactly (9.2 billion units) stops the report naming the column,
    /// rather than printing it as 0 (a line of two such sums would have read `matched`).
    @Test func aSumBeyondExactNanosStopsTheReport() throws {
        try ledger.google("GPA.BIG", "2026-10-10T18:00:00Z", gross: 5_000_000_000_000_000_000, part: "voided:1")
        try ledger.google("GPA.BIG", "2026-10-11T18:00:00Z", gross: 5_000_000_000_000_000_000, part: "voided:2")
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10), [("GPA.X", "Charge", 1_000_000_000, 1_000_000_000)])
        let error = #expect(throws: ReportError.self) {
            try TieOutReport.run(
                month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection)
        }
        #expect(error?.message.contains("beyond what the tie-out adds exactly") == true, "\(String(describing: error))")
    }
}
