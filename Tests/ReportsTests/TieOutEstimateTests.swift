import Foundation
import Postgres
import StoreCalendar
import TestSupport
import Testing

@testable import Reports

/// An order in both sides whose amounts differ: the cause says whether the ledger's figure was only an estimate.
@Suite struct TieOutEstimateTests {
    static func both(ledger: Int64, report: Int64, estimated: Bool) -> GoogleTieOut.Sides {
        var sides = GoogleTieOut.Sides(order: "GPA.9")
        (sides.inLedger, sides.inReport, sides.refunds, sides.reportRows) = (true, true, 1, 1)
        (sides.currency, sides.nanos, sides.reportNanos, sides.estimated) = ("EUR", ledger, report, estimated)
        return sides
    }

    @Test func aConfiguredEstimateThatDiffersSaysSoAndAStoreAmountDoesNot() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "estimate"))
        let tieOut = GoogleTieOut(
            app: "droid", periods: StorePeriods(month: CalendarMonth(year: 2026, month: 10), apple: nil),
            context: GoogleTieOut.Context(historyStart: nil, gaps: []), connection: connection)
        // The configured EUR 4.99 against Google's EUR 4.59: an estimate, named.
        let estimate = try #require(
            tieOut.compare(Self.both(ledger: 4_990_000_000, report: 4_590_000_000, estimated: true)))
        #expect(estimate.status == .amountDiffers && estimate.cause == .estimated)
        #expect(estimate.note == GoogleTieOut.estimatedNote)
        // The same difference on a store amount has no cause to name.
        let store = try #require(
            tieOut.compare(Self.both(ledger: 4_990_000_000, report: 4_590_000_000, estimated: false)))
        #expect(store.status == .amountDiffers && store.cause == nil)
        // An estimate that happens to agree is matched.
        let agreed = try #require(
            tieOut.compare(Self.both(ledger: 4_590_000_000, report: 4_590_000_000, estimated: true)))
        #expect(agreed.status == .matched && agreed.cause == nil)
    }

    /// A configured estimate in the product's only configured currency (USD) against Google's refund in the buyer's
    /// (EUR): the order gives a line in each currency, so no total adds euros to dollars.
    @Test func anEstimateInAnotherCurrencyThanGooglesRefundGivesALineInEach() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "estimatecur"))
        let tieOut = GoogleTieOut(
            app: "droid", periods: StorePeriods(month: CalendarMonth(year: 2026, month: 10), apple: nil),
            context: GoogleTieOut.Context(historyStart: nil, gaps: []), connection: connection)
        var sides = Self.both(ledger: 4_990_000_000, report: 4_590_000_000, estimated: true)
        (sides.currency, sides.ledgerCurrency, sides.reportCurrency) = ("USD", "USD", "EUR")
        let lines = tieOut.lines(sides)
        #expect(lines.map(\.currency) == ["USD", "EUR"])
        #expect(lines.map(\.ledgerNanos) == [4_990_000_000, 0])
        #expect(lines.map(\.reportNanos) == [nil, 4_590_000_000])
        #expect(lines.allSatisfy { $0.status == .amountDiffers && $0.cause == .estimated })
        #expect(lines.first?.note == "in USD; Google refunded EUR: " + GoogleTieOut.estimatedNote)
        // The same currency on both sides is one line, as before.
        sides.reportCurrency = "USD"
        #expect(tieOut.lines(sides).count == 1)
        // A report-only order is in the report's currency, whatever the ledger's entries that moved nothing.
        var reportOnly = Self.both(ledger: 0, report: 4_590_000_000, estimated: false)
        (reportOnly.currency, reportOnly.ledgerCurrency, reportOnly.reportCurrency) = ("USD", "USD", "EUR")
        #expect(tieOut.lines(reportOnly).map(\.currency) == ["EUR"])
        #expect(tieOut.lines(reportOnly).first?.status == .reportOnly)
    }
}
