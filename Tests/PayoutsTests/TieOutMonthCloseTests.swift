import Foundation
import Postgres
import StoreCalendar
import Testing

@testable import Reports

/// A month closed as a controller closes it: a ledger and reports written by hand, with a sync gap, a void from before
/// the ledger's history, Apple reversals after their period and Google's settlement lag. Every status, cause and
/// figure below is worked out by hand in the comments.
@Suite("The month close: tie-out and refund report, one recipe")
struct TieOutMonthCloseTests {
    let ledger: TieOutLedger
    let gapId: Int64

    init() throws {
        ledger = try TieOutLedger(prefix: "tieout_close")
        // The first voided sync ran on Nov 5: Google kept voids back to Oct 6 00:00 UTC, the ledger's history.
        try ledger.voidedSyncRan(at: "2026-11-05T00:00:00Z")
        gapId = try ledger.gap(from: "2026-10-10T00:00:00Z", to: "2026-10-12T00:00:00Z")
        // Google, recorded Nov 1 (before the reports were loaded, Nov 5).
        try ledger.google("GPA.M", "2026-10-20T12:00:00Z", gross: 4_990_000_000, recorded: "2026-11-01T00:00:00Z")
        // Oct 31 13:00 PDT, the month's last day: Google booked it in November.
        try ledger.google("GPA.L", "2026-10-31T20:00:00Z", gross: 3_000_000_000, recorded: "2026-11-01T00:00:00Z")
        // Sep 30 13:00 PDT, September's last day: Google booked it in October.
        try ledger.google("GPA.S", "2026-09-30T20:00:00Z", gross: 7_000_000_000, recorded: "2026-10-01T00:00:00Z")
        try ledger.googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [
                ("GPA.M", "Charge refund", -4_990_000_000, -4_990_000_000, "2026-10-20T12:00:00Z"),
                ("GPA.S", "Charge refund", -7_000_000_000, -7_000_000_000, "2026-10-01T10:00:00Z"),
                // Not in the ledger: Oct 2, before its history; Oct 11, in the gap; Oct 20, neither.
                ("GPA.P", "Charge refund", -1_000_000_000, -1_000_000_000, "2026-10-02T15:00:00Z"),
                ("GPA.G", "Charge refund", -2_000_000_000, -2_000_000_000, "2026-10-11T09:00:00Z"),
                ("GPA.U", "Charge refund", -5_000_000_000, -5_000_000_000, "2026-10-20T09:00:00Z"),
            ])
        try ledger.googleReport(
            month: CalendarMonth(year: 2026, month: 11),
            [("GPA.L", "Charge refund", -3_000_000_000, -3_000_000_000, "2026-11-01T09:00:00Z")])
        // Apple's fiscal October is Sep 27 - Oct 24, November Oct 25 - Nov 21.
        // a1: refunded Oct 5, reversed Nov 2 (after the period, after Apple's report): Apple booked the refund.
        try ledger.apple(
            "a1", "2026-10-05T18:00:00Z", product: "pro", storefront: "USA", currency: "USD", milli: 9990,
            reversed: "2026-11-02T18:00:00Z", recorded: "2026-11-04T00:00:00Z")
        // a2: refunded Oct 20, reversed Oct 26 (after the period, before Apple's report): Apple booked neither.
        try ledger.apple(
            "a2", "2026-10-20T18:00:00Z", product: "gems", storefront: "USA", currency: "USD", milli: 4990,
            reversed: "2026-10-26T18:00:00Z", recorded: "2026-11-04T00:00:00Z")
        // a3: refunded Nov 3 in GB, booked in Apple's November.
        try ledger.apple(
            "a3", "2026-11-03T18:00:00Z", product: "pro", storefront: "GBR", currency: "GBP", milli: 7990,
            recorded: "2026-11-04T00:00:00Z")
        try ledger.appleReport(
            month: CalendarMonth(year: 2026, month: 10), start: "2026-09-27", end: "2026-10-24",
            [("pro", "US", "USD", 1, 9_990_000_000)])
        try ledger.appleReport(
            month: CalendarMonth(year: 2026, month: 11), start: "2026-10-25", end: "2026-11-21",
            [("pro", "GB", "GBP", 1, 7_990_000_000)])
        try ledger.connection.execute("UPDATE payout_report SET closed_at = '2026-11-05T00:00:00Z'")
    }

    func tieOut(_ month: String) throws -> [String: TieOutReport.Line] {
        let report = try TieOutReport.run(
            month: CalendarMonth(month), apps: ["droid": "google", "ios": "apple"], detail: true, on: ledger.connection)
        return Dictionary(
            uniqueKeysWithValues: report.lines.map {
                ($0.orderId.isEmpty ? "\($0.product)/\($0.country)" : $0.orderId, $0)
            })
    }

    @Test func octoberNamesEveryDifferenceWithItsTrueCause() throws {
        let lines = try tieOut("2026-10")
        #expect(lines.keys.sorted() == ["GPA.G", "GPA.L", "GPA.M", "GPA.P", "GPA.S", "GPA.U", "gems/US", "pro/US"])
        #expect(lines["GPA.M"]?.status == .matched && lines["GPA.M"]?.cause == nil)
        #expect(lines["GPA.L"]?.status == .ledgerOnly && lines["GPA.L"]?.cause == .settlementLag)
        #expect(lines["GPA.L"]?.note == "booked by Google in 2026-11")
        #expect(lines["GPA.S"]?.status == .reportOnly && lines["GPA.S"]?.cause == .settlementLag)
        #expect(lines["GPA.S"]?.note == "in the ledger of 2026-09")
        #expect(lines["GPA.P"]?.status == .reportOnly && lines["GPA.P"]?.cause == .beforeHistory)
        #expect(lines["GPA.P"]?.note == "history begins 2026-10-06T00:00:00Z")
        #expect(lines["GPA.G"]?.status == .reportOnly && lines["GPA.G"]?.cause == .inGap)
        #expect(
            lines["GPA.G"]?.note
                == "gap \(gapId): storerecon backfill google-voided --since 2026-10-10T00:00:00Z "
                + "--until 2026-10-12T00:00:00Z --app droid (or storerecon gaps acknowledge \(gapId))")
        #expect(lines["GPA.U"]?.status == .reportOnly && lines["GPA.U"]?.cause == .notRevokedUnseen)
        // Apple: a1 stays in its period and matches; a2 differs by its later reversal only.
        #expect(lines["pro/US"]?.status == .matched && lines["pro/US"]?.ledgerRefunds == 1)
        #expect(lines["gems/US"]?.status == .differs && lines["gems/US"]?.cause == .reversedLater)
        #expect(lines["gems/US"]?.ledgerNanos == 4_990_000_000 && lines["gems/US"]?.reportRefunds == 0)
    }

    @Test func novemberHoldsTheOtherHalfOfEveryTimingDifference() throws {
        let lines = try tieOut("2026-11")
        #expect(lines.keys.sorted() == ["GPA.L", "gems/US", "pro/GB", "pro/US"], "\(lines.keys)")
        #expect(lines["GPA.L"]?.status == .reportOnly && lines["GPA.L"]?.cause == .settlementLag)
        #expect(lines["GPA.L"]?.note == "in the ledger of 2026-10")
        // gems: a2's reversal (-1, -4.99) against nothing: October's +4.99 and this -4.99 clear.
        #expect(lines["gems/US"]?.status == .differs && lines["gems/US"]?.cause == .reversal)
        #expect(lines["gems/US"]?.ledgerRefunds == -1 && lines["gems/US"]?.ledgerNanos == -4_990_000_000)
        // pro: GB's a3 matches; US's a1 reversal is a sale to Apple: the US line differs by it.
        #expect(lines["pro/US"]?.status == .differs && lines["pro/US"]?.cause == .reversal)
        #expect(lines["pro/US"]?.ledgerNanos == -9_990_000_000)
        #expect(lines["pro/GB"]?.status == .matched && lines["pro/GB"]?.ledgerNanos == 7_990_000_000)
    }

    /// The refund report over the month as each store books it, net per platform and currency.
    func refundNet(_ month: String, basis: RefundReportOptions.Basis = .event) throws -> [String: Decimal] {
        let periods = try StorePeriods.resolve(month: CalendarMonth(month), on: ledger.connection)
        let report = try RefundReport.run(
            .storeMonth(periods, by: [.platform], basis: basis), on: ledger.connection)
        var net: [String: Decimal] = [:]
        for group in report.groups {
            let key = "\(group.keys["platform"] ?? "") \(group.keys["currency"] ?? "")"
            net[key, default: 0] += group.netNanos ?? group.grossNanos ?? 0
        }
        return net
    }

    @Test func theTieOutsLedgerFigureIsTheRefundReportsAndAClosedMonthKeepsIt() throws {
        // October: Google M 4.99 + L 3.00 = 7.99 (S is September's); Apple a1 9.99 + a2 4.99 = 14.98 (its
        // reversal on Oct 26 is in Apple's November).
        let october = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google", "ios": "apple"], detail: false,
            on: ledger.connection)
        let ledgerTotals = Dictionary(
            uniqueKeysWithValues: october.totals.map { ("\($0.store) \($0.currency)", $0.ledgerNanos) })
        #expect(ledgerTotals == ["google USD": 7_990_000_000, "apple USD": 14_980_000_000])
        #expect(try refundNet("2026-10") == ledgerTotals)
        #expect(try refundNet("2026-10", basis: .recorded) == ledgerTotals)

        // A late October refund recorded Nov 10, after October closed (its report loaded Nov 5): the event basis
        // takes it in, the recorded basis keeps October's figures and books it in November, when it was recorded.
        try ledger.google("GPA.Z", "2026-10-15T12:00:00Z", gross: 2_000_000_000, recorded: "2026-11-10T00:00:00Z")
        #expect(try refundNet("2026-10")["google USD"] == 9_990_000_000)
        #expect(try refundNet("2026-10", basis: .recorded) == ledgerTotals)
        #expect(try refundNet("2026-11", basis: .recorded)["google USD"] == 2_000_000_000)

        // Google re-issues October's report (other bytes, loaded now): October stays closed since Nov 5.
        try ledger.googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [("GPA.M", "Charge refund", -4_990_000_000, -4_990_000_000, "2026-10-20T12:00:00Z")], version: 2)
        #expect(try refundNet("2026-10", basis: .recorded) == ledgerTotals)
    }

    @Test func everyFormatCarriesTotalsByCauseAndTheLegend() throws {
        let output = RefundReportOutput.memory()
        try TieOutReport.write(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: false, format: .json,
            on: ledger.connection,
            to: output)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.text.utf8)) as? [String: Any])
        let totals = try #require(json["totals"] as? [[String: Any]])
        // Lines M, L, S, P, G, U: one matched, five not.
        #expect(totals.first?["lines"] as? Int == 6 && totals.first?["differing"] as? Int == 5)
        let causes = try #require(json["cause_totals"] as? [[String: Any]])
        let lag = causes.filter { $0["cause"] as? String == "settlement_lag" }
        #expect(lag.map { $0["lines"] as? Int } == [1, 1])
        let legend = try #require(json["legend"] as? [String: [String: String]])
        #expect(legend["causes"]?["in_gap"] != nil && legend["statuses"]?["matched"] != nil)

        let summary = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: false, on: ledger.connection
        )
        let html = summary.html()
        for order in ["GPA.L", "GPA.S", "GPA.P", "GPA.G", "GPA.U"] { #expect(html.contains("<td>\(order)</td>")) }
        #expect(!html.contains("<td>GPA.M</td>"))
        #expect(html.contains("<td class=\"num\">-5.00</td>"))
        #expect(html.contains("<td>before_history</td>") && html.contains("Legend"))
        let csv = summary.csv()
        #expect(csv.contains("google,USD,report_only,in_gap,1,0.00,2.00,-2.00\r\n"), "\(csv)")
        #expect(csv.contains("# cause before_history: "))
        #expect(summary.table().contains("Legend") && summary.table().contains("By cause"))
    }
}
