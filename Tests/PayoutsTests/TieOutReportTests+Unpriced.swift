import Foundation
import Payouts
import StoreCalendar
import Testing

@testable import Reports

/// Lines with refunds of unknown amount: the ledger's side is the sum of the known ones, as `report refunds` adds
/// them, and the line says how many are unpriced.
extension TieOutReportTests {
    /// An order refunded in two parts, one priced and one not: the line's ledger amount is the priced part, as
    /// `report refunds` adds it (the unknown one in no sum), and the tie-out's total is that report's net.
    @Test func aPartlyPricedOrderCarriesItsKnownPartAndTheRefundReportsFigure() throws {
        try ledger.google("GPA.P", "2026-10-10T12:00:00Z", gross: 5_000_000_000, tax: 500_000_000, part: "p1")
        try ledger.google("GPA.P", "2026-10-11T12:00:00Z", gross: nil, part: "p2")
        try ledger.googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [("GPA.P", "Charge refund", -6_000_000_000, -6_000_000_000, nil)])
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection)
        let line = try #require(report.lines.first)
        #expect(report.lines.count == 1)
        #expect(line.ledgerNanos == 4_500_000_000 && line.ledgerRefunds == 2)
        #expect(line.status == .amountDiffers && line.cause == .unpriced)
        #expect(line.note == "1 of the ledger's refunds without an amount, in no sum")
        #expect(report.csv().contains("GPA.P,pro,US,2,4.50,1,6.00,-1.50,amount_differs,unpriced,"))

        let periods = try StorePeriods.resolve(month: CalendarMonth("2026-10"), on: connection)
        let refunds = try RefundReport.run(.storeMonth(periods, apps: ["droid"]), on: connection)
        let net = refunds.groups.compactMap(\.netNanos).reduce(0, +)
        #expect(net == Decimal(4_500_000_000) && refunds.groups.map(\.unknownAmount).reduce(0, +) == 1)
        #expect(report.totals.first?.ledgerNanos == net)
    }

    /// A ledger-only order whose unpriced part has no currency yet: the line is in the priced part's currency, and so
    /// is its total.
    @Test func aPartlyPricedOrderIsInThePricedPartsCurrency() throws {
        try ledger.google("GPA.Q", "2026-10-10T12:00:00Z", gross: 2_000_000_000, part: "p1")
        try ledger.google("GPA.Q", "2026-10-11T12:00:00Z", gross: nil, part: "p2")
        try connection.execute("UPDATE refund SET currency = NULL WHERE order_id = 'GPA.Q' AND part_key = 'p2'")
        try googleReport(
            month: CalendarMonth(year: 2026, month: 10), [("GPA.X", "Charge", 1_000_000_000, 1_000_000_000)])
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection)
        let line = try #require(report.lines.first { $0.orderId == "GPA.Q" })
        #expect(line.currency == "USD" && line.ledgerNanos == 2_000_000_000)
        // A refund the report lacks is not explained by an amount the ledger does not know: no cause.
        #expect(line.status == .ledgerOnly && line.cause == nil)
        #expect(line.note == "1 of the ledger's refunds without an amount, in no sum")
        #expect(report.totals.map(\.currency) == ["USD"])
    }

    /// A refund without an amount only adds money: a report holding less than the ledger's known sum is not explained
    /// by it (no cause); one holding more is (`unpriced`).
    @Test func anUnpricedRefundExplainsOnlyAReportHoldingMoreThanTheKnownSum() throws {
        for order in ["GPA.LESS", "GPA.MORE"] {
            try ledger.google(order, "2026-10-10T12:00:00Z", gross: 4_500_000_000, part: "p1")
            try ledger.google(order, "2026-10-11T12:00:00Z", gross: nil, part: "p2")
        }
        try ledger.googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [
                ("GPA.LESS", "Charge refund", -3_000_000_000, -3_000_000_000, nil),
                ("GPA.MORE", "Charge refund", -6_000_000_000, -6_000_000_000, nil),
            ])
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2026, month: 10), apps: ["droid": "google"], detail: true, on: connection)
        let causes = report.lines.map { "\($0.orderId) \($0.status.rawValue) \($0.cause?.rawValue ?? "-")" }
        #expect(causes == ["GPA.LESS amount_differs -", "GPA.MORE amount_differs unpriced"])
        #expect(report.lines.allSatisfy { $0.note == "1 of the ledger's refunds without an amount, in no sum" })
    }

    /// Apple: a refund of 1.99 and a prorated one without its percentage (no amount); the report has neither. The
    /// line carries the known amount; two units the report lacks are not explained by an unknown amount, so it
    /// names no cause (`AppleTieOutCauseTests` has the line whose units agree).
    @Test func anAppleLineWithARefundOfUnknownAmountCarriesTheKnownOnes() throws {
        try loadAppleOctober2025()
        try apple(
            "t10", "2025-10-08T18:00:00Z", product: "premium.weekly", storefront: "CAN", currency: "CAD", milli: 1990)
        try apple(
            "t11", "2025-10-09T18:00:00Z", product: "premium.weekly", storefront: "CAN", currency: "CAD", milli: nil,
            type: "prorated")
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2025, month: 10), apps: ["ios": "apple"], detail: true, on: connection)
        let csv = report.csv()
        #expect(
            csv.contains(
                "apple,ios,CAD,,premium.weekly,CA,2,1.99,0,0.00,1.99,differs,,"
                    + "\"1 of the ledger's refunds without an amount, in no sum\"\r\n"), "\(csv)")

    }
}
