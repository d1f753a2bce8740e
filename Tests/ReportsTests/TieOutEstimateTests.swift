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
}
