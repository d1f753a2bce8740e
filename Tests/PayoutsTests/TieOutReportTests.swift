import Foundation
import Payouts
import Postgres
import Reconciler
import StoreCalendar
import TestSupport
import Testing

@testable import Reports

/// The tie-out over a ledger and reports written by hand; every expected figure is worked out in the comments.
@Suite("TieOutReport against a real database")
struct TieOutReportTests {
    let ledger: TieOutLedger
    var connection: PostgresConnection { ledger.connection }

    init() throws {
        ledger = try TieOutLedger(prefix: "tieout")
        // The voided sync has run since September: every October void could be fetched.
        try ledger.voidedSyncRan(at: "2026-09-01T00:00:00Z")
    }

    func google(_ order: String, _ at: String, gross: Int64?, tax: Int64 = 0) throws {
        try ledger.google(order, at, gross: gross, tax: tax)
    }

    func apple(
        _ id: String, _ at: String, product: String, storefront: String, currency: String, milli: Int64?,
        type: String = "full", reversed: Bool = false
    ) throws {
        try ledger.apple(
            id, at, product: product, storefront: storefront, currency: currency, milli: milli, type: type,
            reversed: reversed ? "2026-11-20T00:00:00Z" : nil)
    }

    func googleReport(month: CalendarMonth, _ rows: [(order: String, kind: String, buyer: Int64, merchant: Int64)])
        throws
    {
        try ledger.googleReport(month: month, rows.map { ($0.order, $0.kind, $0.buyer, $0.merchant, String?.none) })
    }

    /// October's ledger and Google's reports of September to November: one order of each status and cause.
    func octoberWithEveryCause() throws {
        try google("GPA.A", "2026-10-10T12:00:00Z", gross: 5_990_000_000, tax: 1_000_000_000)  // net 4.99
        try google("GPA.B", "2026-10-11T12:00:00Z", gross: 10_000_000_000)  // 10.00, report 9.00
        try google("GPA.C", "2026-10-31T20:00:00Z", gross: 3_000_000_000)  // Oct 31 13:00 PDT, booked in November
        try google("GPA.E", "2026-10-12T12:00:00Z", gross: nil)  // the Orders API could not price it
        try google("GPA.F", "2026-09-30T20:00:00Z", gross: 7_000_000_000)  // Sep 30 PDT, booked in October
        try google("GPA.G", "2026-10-05T12:00:00Z", gross: 1_000_000_000)  // not in any report
        try google("GPA.H", "2026-11-01T06:30:00Z", gross: 4_000_000_000)  // Oct 31 23:30 PDT: Google's October
        try googleReport(
            month: CalendarMonth(year: 2026, month: 9), [("GPA.Z", "Charge refund", -1_000_000_000, -1_000_000_000)])
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [
                ("GPA.A", "Charge", 4_990_000_000, 4_990_000_000),
                ("GPA.A", "Charge refund", -4_990_000_000, -4_990_000_000),
                ("GPA.A", "Google fee refund", 750_000_000, 750_000_000),
                ("GPA.B", "Charge refund", -9_000_000_000, -9_000_000_000),
                ("GPA.D", "Charge refund", -2_500_000_000, -2_500_000_000),
                ("GPA.E", "Charge refund", -1_990_000_000, -1_990_000_000),
                ("GPA.F", "Charge refund", -7_000_000_000, -7_000_000_000),
                ("GPA.H", "Charge refund", -4_000_000_000, -4_000_000_000),
            ])
        try googleReport(
            month: CalendarMonth(year: 2026, month: 11), [("GPA.C", "Charge refund", -3_000_000_000, -3_000_000_000)])

    }

    @Test func googleOrdersGetEveryStatusAndCause() throws {
        try octoberWithEveryCause()
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection)
        let byOrder = Dictionary(uniqueKeysWithValues: report.lines.map { ($0.orderId, $0) })
        #expect(
            report.lines.map(\.orderId) == ["GPA.A", "GPA.B", "GPA.C", "GPA.D", "GPA.E", "GPA.F", "GPA.G", "GPA.H"])
        #expect(byOrder["GPA.A"]?.status == .matched && byOrder["GPA.A"]?.cause == nil)
        #expect(byOrder["GPA.B"]?.status == .amountDiffers)
        #expect(byOrder["GPA.C"]?.status == .ledgerOnly && byOrder["GPA.C"]?.cause == .settlementLag)
        #expect(byOrder["GPA.C"]?.note == "booked by Google in 2026-11")
        #expect(byOrder["GPA.D"]?.status == .reportOnly && byOrder["GPA.D"]?.cause == .notRevokedUnseen)
        #expect(byOrder["GPA.E"]?.status == .amountDiffers && byOrder["GPA.E"]?.cause == .unpriced)
        // F is September's refund (the ledger side of one month only): Google booked it here.
        #expect(byOrder["GPA.F"]?.status == .reportOnly && byOrder["GPA.F"]?.cause == .settlementLag)
        #expect(byOrder["GPA.G"]?.status == .ledgerOnly && byOrder["GPA.G"]?.cause == nil)
        #expect(byOrder["GPA.H"]?.status == .matched)

        // Ledger: A 4.99 + B 10.00 + C 3.00 + G 1.00 + H 4.00 = 22.99 (E unknown, left out; F is September's).
        // Report: A 4.99 + B 9.00 + D 2.50 + E 1.99 + F 7.00 + H 4.00 = 29.48. Difference -6.49.
        let csv = report.csv()
        #expect(
            csv.hasPrefix(
                "store,app,currency,order_id,product,country,ledger_refunds,ledger_amount,report_refunds,report_amount,"
                    + "difference,status,cause,note\r\n"))
        #expect(csv.contains("google,droid,USD,GPA.B,pro,US,1,10.00,1,9.00,1.00,amount_differs,,\r\n"), "\(csv)")
        #expect(
            csv.contains(
                "google,droid,USD,GPA.C,pro,US,1,3.00,0,0.00,3.00,ledger_only,settlement_lag,booked by Google in 2026-11\r\n"
            ))
        #expect(csv.contains("google,droid,USD,GPA.D,pro,US,0,0.00,1,2.50,-2.50,report_only,not_revoked_unseen,\r\n"))
        #expect(
            csv.contains(
                "google,droid,USD,GPA.E,pro,US,1,,1,1.99,,amount_differs,unpriced,"
                    + "\"1 of the ledger's refunds without an amount, in no sum\"\r\n"))
        #expect(
            csv.contains(
                "google,droid,USD,GPA.F,pro,US,0,0.00,1,7.00,-7.00,report_only,settlement_lag,in the ledger of 2026-09\r\n"
            ))
        let total = try #require(report.totals.first)
        #expect(report.totals.count == 1)
        #expect(total.lines == 8 && total.matched == 2 && total.differing == 6)
        #expect(total.ledgerNanos == Decimal(22_990_000_000) && total.reportNanos == Decimal(29_480_000_000))
        // Payout cost: -(−4.99 − 9.00 − 2.50 − 1.99 − 7.00 − 4.00 + 0.75) = 28.73 USD; the Charge row is not a refund.
        #expect(report.payoutCosts == [.init(store: "google", app: "droid", currency: "USD", nanos: 28_730_000_000)])
        let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any]
        #expect(json?["differing"] as? Int == 6)
        // B (amount_differs) and G (ledger_only) name no cause: the two lines to raise.
        #expect(report.withoutCause == 2 && json?["without_cause"] as? Int == 2)
        let totals = try #require(json?["totals"] as? [[String: Any]])
        #expect(totals.first?["difference"] as? String == "-6.49" && totals.first?["lines"] as? Int == 8)
        #expect((json?["lines"] as? [[String: Any]])?.count == 8)
        #expect(report.table().contains("22.99"))
        #expect(report.table().contains("\n8 lines, 6 not matched, 2 without a cause\n"))
        #expect(report.html().contains("<td>GPA.D</td>"))
        #expect(report.html().contains("<p>8 lines, 6 not matched, 2 without a cause."))
    }

    @Test func theNextMonthNamesTheMonthWhoseLedgerHoldsTheLateRefund() throws {
        try google("GPA.C", "2026-10-31T20:00:00Z", gross: 3_000_000_000)
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10), [("GPA.X", "Charge", 1_000_000_000, 1_000_000_000)])
        try googleReport(
            month: CalendarMonth(year: 2026, month: 11), [("GPA.C", "Charge refund", -3_000_000_000, -3_000_000_000)])
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 11), apps: ["droid": "google"], detail: true, on: connection)
        #expect(report.lines.count == 1)
        #expect(report.lines.first?.status == .reportOnly && report.lines.first?.cause == .settlementLag)
        #expect(report.lines.first?.note == "in the ledger of 2026-10")
    }

    /// Orders refunded on both sides of a month's edge, in parts: each order's difference is a last-day refund that
    /// Google booked in the other month, and the line says which. Times are UTC; October 31 ends 07:00 UTC Nov 1,
    /// September 30 at 07:00 UTC Oct 1.
    @Test func anOrderWhosePartsStraddleAMonthsEdgeDiffersByItsLastDayRefunds() throws {
        // P: 2.00 on Sep 30 (Pacific; Google's October), 3.00 on Oct 14. Ledger 3.00, report 5.00.
        try ledger.google("GPA.P", "2026-09-30T22:00:00Z", gross: 2_000_000_000, part: "voided:1")
        try ledger.google("GPA.P", "2026-10-14T12:00:00Z", gross: 3_000_000_000, part: "voided:2")
        // Q: 1.00 on Oct 12, 4.00 on Oct 31 (booked in November). Ledger 5.00, report 1.00.
        try ledger.google("GPA.Q", "2026-10-12T12:00:00Z", gross: 1_000_000_000, part: "voided:1")
        try ledger.google("GPA.Q", "2026-11-01T05:00:00Z", gross: 4_000_000_000, part: "voided:2")
        // R: both at once: 0.50 on Sep 30, 1.50 on Oct 20, 2.50 on Oct 31. Ledger 4.00, report 2.00.
        try ledger.google("GPA.R", "2026-10-01T06:00:00Z", gross: 500_000_000, part: "voided:1")
        try ledger.google("GPA.R", "2026-10-20T12:00:00Z", gross: 1_500_000_000, part: "voided:2")
        try ledger.google("GPA.R", "2026-10-31T23:00:00Z", gross: 2_500_000_000, part: "voided:3")
        // S: 1.00 on Sep 30 and 1.00 on Oct 9; Google's October holds 3.00: the edge does not explain it.
        try ledger.google("GPA.S", "2026-09-30T22:00:00Z", gross: 1_000_000_000, part: "voided:1")
        try ledger.google("GPA.S", "2026-10-09T12:00:00Z", gross: 1_000_000_000, part: "voided:2")
        // T: 2.00 on Sep 30 and 1.00 on Nov 10, none in October: report-only, September's last day, not November.
        try ledger.google("GPA.T", "2026-09-30T22:00:00Z", gross: 2_000_000_000, part: "voided:1")
        try ledger.google("GPA.T", "2026-11-10T12:00:00Z", gross: 1_000_000_000, part: "voided:2")
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [
                ("GPA.P", "Charge refund", -2_000_000_000, -2_000_000_000),
                ("GPA.P", "Charge refund", -3_000_000_000, -3_000_000_000),
                ("GPA.Q", "Charge refund", -1_000_000_000, -1_000_000_000),
                ("GPA.R", "Charge refund", -500_000_000, -500_000_000),
                ("GPA.R", "Charge refund", -1_500_000_000, -1_500_000_000),
                ("GPA.S", "Charge refund", -3_000_000_000, -3_000_000_000),
                ("GPA.T", "Charge refund", -2_000_000_000, -2_000_000_000),
            ])
        try googleReport(
            month: CalendarMonth(year: 2026, month: 11),
            [
                ("GPA.Q", "Charge refund", -4_000_000_000, -4_000_000_000),
                ("GPA.R", "Charge refund", -2_500_000_000, -2_500_000_000),
            ])
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection)
        let byOrder = Dictionary(uniqueKeysWithValues: report.lines.map { ($0.orderId, $0) })
        #expect(report.lines.map(\.orderId) == ["GPA.P", "GPA.Q", "GPA.R", "GPA.S", "GPA.T"])
        #expect(report.lines.prefix(4).allSatisfy { $0.status == .amountDiffers })
        let earlier = "the report holds the 2026-09-30 refund, in the ledger of 2026-09"
        #expect(byOrder["GPA.P"]?.ledgerNanos == 3_000_000_000 && byOrder["GPA.P"]?.reportNanos == 5_000_000_000)
        #expect(byOrder["GPA.P"]?.cause == .settlementLag && byOrder["GPA.P"]?.note == earlier)
        #expect(byOrder["GPA.Q"]?.ledgerNanos == 5_000_000_000 && byOrder["GPA.Q"]?.reportNanos == 1_000_000_000)
        #expect(byOrder["GPA.Q"]?.cause == .settlementLag && byOrder["GPA.Q"]?.note == "booked by Google in 2026-11")
        #expect(byOrder["GPA.R"]?.ledgerNanos == 4_000_000_000 && byOrder["GPA.R"]?.reportNanos == 2_000_000_000)
        #expect(byOrder["GPA.R"]?.cause == .settlementLag)
        #expect(byOrder["GPA.R"]?.note == "booked by Google in 2026-11; " + earlier)
        #expect(byOrder["GPA.S"]?.ledgerNanos == 1_000_000_000 && byOrder["GPA.S"]?.reportNanos == 3_000_000_000)
        #expect(byOrder["GPA.S"]?.cause == nil && byOrder["GPA.S"]?.note == "")
        #expect(byOrder["GPA.T"]?.status == .reportOnly && byOrder["GPA.T"]?.cause == .settlementLag)
        #expect(byOrder["GPA.T"]?.note == "in the ledger of 2026-09")
        // September's last-day refunds stay out of October's ledger figure: 3.00 + 5.00 + 4.00 + 1.00 = 13.00.
        #expect(report.totals.first?.ledgerNanos == Decimal(13_000_000_000))
        #expect(report.differing == 5 && report.withoutCause == 1)
    }

    @Test func anAppWithoutAReportIsNamedNotTiedOut() throws {
        try google("GPA.A", "2026-10-10T12:00:00Z", gross: 1_000_000_000)
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: false, on: connection)
        #expect(report.missingReports == ["droid"])
        #expect(report.lines.isEmpty)
        #expect(report.table().contains("no financial report loaded for droid in 2026-10"))
    }

    /// Apple's FINANCIAL report of fiscal 2025-10 (Sep 28 to Oct 25) for app `ios`.
    func loadAppleOctober2025() throws {
        let data = try Fixture.data("financial-ZZ-2025-10.txt.gz")
        try PayoutStore(connection: connection).store(
            try FinanceReportParser.parse(gzip: data, name: "financial-ZZ-2025-10.txt.gz"), app: "ios")
    }

    @Test func appleTiesOutPerProductCountryAndCurrencyOverTheReportsPeriod() throws {
        try loadAppleOctober2025()
        // premium.monthly US USD: 9.99 + 9.99 + a prorated 5.00 = 3 units, 24.98; the report: 2 x 9.99 + 1 x 5.00.
        try apple(
            "t1", "2025-10-01T18:00:00Z", product: "premium.monthly", storefront: "USA", currency: "USD", milli: 9990)
        try apple(
            "t2", "2025-10-02T18:00:00Z", product: "premium.monthly", storefront: "USA", currency: "USD", milli: 9990)
        try apple(
            "t3", "2025-10-03T18:00:00Z", product: "premium.monthly", storefront: "USA", currency: "USD", milli: 5000,
            type: "prorated")
        // premium.yearly DE EUR: 2 refunds (one on the period's last day, Oct 25 PDT); the report has 1.
        try apple(
            "t4", "2025-10-10T18:00:00Z", product: "premium.yearly", storefront: "DEU", currency: "EUR", milli: 59990)
        try apple(
            "t5", "2025-10-25T20:00:00Z", product: "premium.yearly", storefront: "DEU", currency: "EUR", milli: 59990)
        // premium.monthly GB GBP: a refund and a family revoke; the report has neither.
        try apple(
            "t6", "2025-10-05T18:00:00Z", product: "premium.monthly", storefront: "GBR", currency: "GBP", milli: 7990)
        try apple(
            "t7", "2025-10-06T18:00:00Z", product: "premium.monthly", storefront: "GBR", currency: "GBP", milli: nil,
            type: "family_revoke")
        // Outside the period (Oct 27 is in Apple's November): not counted. t9, reversed after the period (Nov 20),
        // stays in it; the report has no FR line, as Apple does not book a refund reversed before its report.
        try apple(
            "t8", "2025-10-27T18:00:00Z", product: "premium.monthly", storefront: "USA", currency: "USD", milli: 9990)
        try apple(
            "t9", "2025-10-07T18:00:00Z", product: "premium.monthly", storefront: "FRA", currency: "EUR", milli: 9990,
            reversed: true)

        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2025, month: 10), apps: ["ios": "apple"], detail: true, on: connection)
        let csv = report.csv()
        #expect(report.lines.count == 4, "\(csv)")
        #expect(csv.contains("apple,ios,USD,,premium.monthly,US,3,24.98,3,24.98,0.00,matched,,\r\n"), "\(csv)")
        #expect(
            csv.contains(
                "apple,ios,EUR,,premium.yearly,DE,2,119.98,1,59.99,59.99,differs,period_edge,\"1 unit(s) refunded on "
                    + "the period's last day, 2025-10-25\"\r\n"), "\(csv)")
        // The revocation moved nothing and explains nothing: the refund the report lacks is to be looked into.
        #expect(
            csv.contains(
                "apple,ios,GBP,,premium.monthly,GB,1,7.99,0,0.00,7.99,differs,,\"1 family-sharing revocation(s), no "
                    + "money moved\"\r\n"), "\(csv)")
        #expect(
            csv.contains(
                "apple,ios,EUR,,premium.monthly,FR,1,9.99,0,0.00,9.99,differs,reversed_later,1 unit(s) reversed from "
                    + "2026-11-19 before Apple's report; the reversal's period offsets them\r\n"), "\(csv)")
        // What refunds cost in payouts: -(-13.98 - 3.50) USD and 38.00 EUR of Extended Partner Share.
        #expect(
            report.payoutCosts.sorted { $0.currency < $1.currency } == [
                .init(store: "apple", app: "ios", currency: "EUR", nanos: 38_000_000_000),
                .init(store: "apple", app: "ios", currency: "USD", nanos: 17_480_000_000),
            ])
        #expect(report.reports.first?.periodStart == "2025-09-28")
    }
}

/// The tie-out's integer amounts: rounded half to even to the minor unit, printed in major units.
@Suite struct TieOutAmountTests {
    @Test(arguments: [
        (Int64(4_995_000_000), "USD", "5.00"), (4_985_000_000, "USD", "4.98"), (-4_985_000_000, "USD", "-4.98"),
        (-4_995_000_000, "USD", "-5.00"), (-500_000_000_000, "JPY", "-500"), (1_500_000_000, "JPY", "2"),
        (2_500_000_000, "JPY", "2"), (1_234_500_000, "KWD", "1.234"), (10_000_000, "USD", "0.01"), (0, "EUR", "0.00"),
    ])
    func roundsHalfToEvenInTheMinorUnit(nanos: Int64, currency: String, text: String) {
        #expect(TieOutAmount.text(nanos, currency) == text)
    }

    @Test func totalsAddPastWhatAnIntegerHolds() {
        // 3 x 4e18 nanos - 1 = 11,999,999,999,999,999,999: past Int64.max (about 9.2e18), exact.
        var sum = TieOutReport.Tally.Sum()
        for _ in 0..<3 { sum.add(4_000_000_000_000_000_000) }
        sum.add(-1)
        #expect(sum.value == Decimal(string: "11999999999999999999"))
    }

    @Test func parsesWholeNumericText() {
        #expect(TieOutAmount.parse("4990000000") == 4_990_000_000)
        #expect(TieOutAmount.parse("-12.000") == -12)
        #expect(TieOutAmount.parse("1.5") == nil)
    }
}
