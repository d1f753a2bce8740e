import Foundation
import Payouts
import StoreCalendar
import Testing

@testable import Reports

/// Apple refunds reversed within their own period cancel in the ledger and are never booked by Apple: they are
/// neither an unknown amount nor a last-day refund that Apple may have booked next door.
extension TieOutReportTests {
    @Test func aRefundReversedInItsPeriodIsNeitherUnpricedNorAnEdge() throws {
        try loadAppleOctober2025()
        // coins IT: a refund without an amount on Oct 10, reversed Oct 12: nothing to tie out.
        try ledger.apple(
            "t20", "2025-10-10T18:00:00Z", product: "coins", storefront: "ITA", currency: "EUR", milli: nil,
            reversed: "2025-10-12T18:00:00Z")
        // coins ES: 4.99 on the period's last day (Oct 25 PDT), reversed the same day; another 4.99 on Oct 10 that
        // the report lacks. The reversed one is not what Apple booked next door: the line names no cause.
        try ledger.apple(
            "t21", "2025-10-25T20:00:00Z", product: "coins", storefront: "ESP", currency: "EUR", milli: 4990,
            reversed: "2025-10-25T22:00:00Z")
        try ledger.apple(
            "t22", "2025-10-10T18:00:00Z", product: "coins", storefront: "ESP", currency: "EUR", milli: 4990)
        let report = try TieOutReport.run(
            month: CalendarMonth(year: 2025, month: 10), apps: ["ios": "apple"], detail: true, on: connection)
        let csv = report.csv()
        #expect(!csv.contains(",coins,IT,"), "\(csv)")
        #expect(csv.contains("apple,ios,EUR,,coins,ES,1,4.99,0,0.00,4.99,differs,,\r\n"), "\(csv)")
    }
}

extension TieOutReportTests {
    /// A refund of the previous period's last day (Sept 27, 2025 PDT) reversed since (Oct 28, before Apple's October
    /// report) is no refund Apple booked in October: the unit October's report has over the ledger stays without a
    /// cause.
    @Test func aPreviousLastDayRefundReversedSinceIsNoEdge() throws {
        try ledger.appleReport(
            month: CalendarMonth(year: 2025, month: 10), start: "2025-09-28", end: "2025-10-25",
            [("coins", "ES", "EUR", 2, 4_990_000_000)])
        try ledger.apple(
            "t30", "2025-10-10T18:00:00Z", product: "coins", storefront: "ESP", currency: "EUR", milli: 4990)
        try ledger.apple(
            "t31", "2025-09-27T20:00:00Z", product: "coins", storefront: "ESP", currency: "EUR", milli: 4990,
            reversed: "2025-10-28T18:00:00Z")
        let csv = try TieOutReport.run(
            month: CalendarMonth(year: 2025, month: 10), apps: ["ios": "apple"], detail: true, on: connection
        ).csv()
        #expect(csv.contains("apple,ios,EUR,,coins,ES,1,4.99,2,9.98,-4.99,differs,,\r\n"), "\(csv)")
    }
}
