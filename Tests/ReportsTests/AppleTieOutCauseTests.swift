import Foundation
import Testing

@testable import Reports

/// Why an Apple line of the tie-out differs, worked out by hand: a cause is named only when it accounts for the
/// difference, and a line that moved money is never left out.
@Suite struct AppleTieOutCauseTests {
    static let key = AppleTieOut.key("pro.monthly", "DE", "EUR")
    static let edges = AppleTieOut.Edges(
        lastDay: "2026-10-24", previousLastDay: "2026-09-26", previousLastDays: [key: day(units: 1, euros: 5)])

    /// An edge day of `units` refunds of `euros` in all, each the same amount unless `uniform` is false.
    static func day(units: Int, euros: Int64, uniform: Bool = true) -> AppleTieOut.EdgeDay {
        let nanos = euros * 1_000_000_000
        return AppleTieOut.EdgeDay(units: units, nanos: nanos, unitNanos: uniform ? nanos / Int64(units) : nil)
    }

    static func compare(_ ledger: AppleTieOut.LedgerSide?, report: AppleTieOut.ReportSide?) -> TieOutReport.Line? {
        AppleTieOut.compare(key: key, ledger: ledger, report: report, app: "ios", edges: edges)
    }

    static func side(units: Int, euros: Int64, _ change: (inout AppleTieOut.LedgerSide) -> Void = { _ in })
        -> AppleTieOut.LedgerSide
    {
        var side = AppleTieOut.LedgerSide(units: units, nanos: euros * 1_000_000_000, known: max(units, 1))
        change(&side)
        return side
    }

    /// A refund of 4.99 and a reversal of an earlier 5.99 refund: no net unit, but 1.00 less money, and no report
    /// row. The line stays, so the tie-out's ledger total is the refund report's.
    @Test func aLineWithNoNetUnitButMoneyIsKept() throws {
        let side = AppleTieOut.LedgerSide(units: 0, nanos: -1_000_000_000, known: 2, reversalUnits: 1)
        let line = try #require(Self.compare(side, report: nil))
        #expect(line.status == .differs && line.ledgerNanos == -1_000_000_000)
        #expect(Self.compare(AppleTieOut.LedgerSide(), report: nil) == nil)
    }

    /// Unknown amounts explain a line only when its units agree: with a unit missing from the ledger, the line
    /// names no cause (and still says what is unpriced).
    @Test func unpricedOnlyWhenTheUnitsAgree() throws {
        let unpriced = Self.side(units: 2, euros: 5) { $0.unknown = 1 }
        #expect(Self.compare(unpriced, report: .init(units: 2, nanos: 10_000_000_000))?.cause == .unpriced)
        let short = try #require(Self.compare(unpriced, report: .init(units: 5, nanos: 25_000_000_000)))
        #expect(short.cause == nil && short.note.contains("without an amount"))
    }

    /// The ledger has one unit over the report and one refund on the period's last day: period_edge. Over by two,
    /// or under the report, that refund cannot be the reason.
    @Test func theLastDayExplainsOnlyUnitsTheLedgerHasOver() {
        let lastDay = Self.side(units: 3, euros: 15) { $0.lastDay = Self.day(units: 1, euros: 5) }
        let over = Self.compare(lastDay, report: .init(units: 2, nanos: 10_000_000_000))
        #expect(over?.cause == .periodEdge && over?.note == "1 unit(s) refunded on the period's last day, 2026-10-24")
        #expect(Self.compare(lastDay, report: .init(units: 1, nanos: 5_000_000_000))?.cause == nil)
        // Under the report by one: the previous period's last-day refund, which Apple may have booked here.
        let under = Self.compare(lastDay, report: .init(units: 4, nanos: 20_000_000_000))
        #expect(
            under?.cause == .periodEdge
                && under?.note == "1 unit(s) refunded on the previous period's last day, 2026-09-26")
        #expect(Self.compare(lastDay, report: .init(units: 5, nanos: 25_000_000_000))?.cause == nil)
    }

    /// The edge accounts for the money too: a unit over whose money is not the last day's refund (a 2.00 prorated
    /// refund Apple never booked, the last day's 9.00 booked in the period) names no cause; nor does a unit under
    /// the report by other money than the previous last day's.
    @Test func theEdgeAccountsForTheMoneyOver() {
        let prorated = Self.side(units: 2, euros: 11) { $0.lastDay = Self.day(units: 1, euros: 9) }
        #expect(Self.compare(prorated, report: .init(units: 1, nanos: 9_000_000_000))?.cause == nil)
        #expect(Self.compare(prorated, report: .init(units: 1, nanos: 2_000_000_000))?.cause == .periodEdge)
        let under = Self.side(units: 1, euros: 5)
        #expect(Self.compare(under, report: .init(units: 2, nanos: 12_000_000_000))?.cause == nil)
        #expect(Self.compare(under, report: .init(units: 2, nanos: 10_000_000_000))?.cause == .periodEdge)
    }

    /// Last-day refunds of different amounts: all of them booked next door is a cause, some of them is not (which
    /// ones cannot be told).
    @Test func unevenLastDayRefundsExplainOnlyAllOfThem() {
        let uneven = Self.side(units: 3, euros: 20) { $0.lastDay = Self.day(units: 2, euros: 12, uniform: false) }
        #expect(Self.compare(uneven, report: .init(units: 1, nanos: 8_000_000_000))?.cause == .periodEdge)
        #expect(Self.compare(uneven, report: .init(units: 2, nanos: 14_000_000_000))?.cause == nil)
        let even = Self.side(units: 3, euros: 18) { $0.lastDay = Self.day(units: 2, euros: 12) }
        #expect(Self.compare(even, report: .init(units: 2, nanos: 12_000_000_000))?.cause == .periodEdge)
    }

    /// Revocations move no money: a cause only when the report counts them as units and the money agrees.
    @Test func familyRevocationsExplainOnlyUnitsWithoutMoney() {
        let revoked = Self.side(units: 1, euros: 5) { $0.familyRevokes = 2 }
        let counted = Self.compare(revoked, report: .init(units: 3, nanos: 5_000_000_000))
        #expect(counted?.cause == .familyRevoke)
        let missing = Self.compare(revoked, report: nil)
        #expect(missing?.cause == nil && missing?.note == "2 family-sharing revocation(s), no money moved")
    }

    /// Unpriced refunds add money: they explain a line whose report has more money than the ledger's known sum,
    /// never one with less (the missing amounts would only widen it); unpriced reversals the other way.
    @Test func unpricedAmountsExplainOnlyMoneyTheyCanMakeUp() {
        let refund = Self.side(units: 2, euros: 5) { $0.unknown = 1 }
        #expect(Self.compare(refund, report: .init(units: 2, nanos: 4_000_000_000))?.cause == nil)
        #expect(Self.compare(refund, report: .init(units: 2, nanos: 9_000_000_000))?.cause == .unpriced)
        let reversal = Self.side(units: 0, euros: 5) { ($0.unknown, $0.reversalUnknown) = (1, 1) }
        #expect(Self.compare(reversal, report: .init(units: 0, nanos: 4_000_000_000))?.cause == .unpriced)
        #expect(Self.compare(reversal, report: .init(units: 0, nanos: 6_000_000_000))?.cause == nil)
    }

    /// A cause that takes away the only unpriced entries of a line still accounts for it: a refund without an
    /// amount reversed after the period, an unpriced reversal of an earlier refund, an unpriced last-day refund.
    @Test func aCauseMayTakeAwayTheLinesOnlyUnpricedEntries() {
        let later = Self.side(units: 2, euros: 5) {
            ($0.unknown, $0.laterUnits, $0.laterUnknown, $0.laterDay) = (1, 1, 1, "2026-11-02")
        }
        #expect(Self.compare(later, report: .init(units: 1, nanos: 5_000_000_000))?.cause == .reversedLater)
        let reversal = Self.side(units: 0, euros: 5) { ($0.unknown, $0.reversalUnits, $0.reversalUnknown) = (1, 1, 1) }
        #expect(Self.compare(reversal, report: .init(units: 1, nanos: 5_000_000_000))?.cause == .reversal)
        let edge = Self.side(units: 2, euros: 5) {
            $0.unknown = 1
            $0.lastDay = AppleTieOut.EdgeDay(units: 1, nanos: 0, unitNanos: nil, unknown: 1)
        }
        #expect(Self.compare(edge, report: .init(units: 1, nanos: 5_000_000_000))?.cause == .periodEdge)
        // The previous period's last day without an amount: what Apple booked here cannot be told from it.
        var edges = Self.edges
        edges.previousLastDays[Self.key] = AppleTieOut.EdgeDay(units: 1, nanos: 0, unitNanos: nil, unknown: 1)
        let under = AppleTieOut.compare(
            key: Self.key, ledger: Self.side(units: 1, euros: 5), report: .init(units: 2, nanos: 10_000_000_000),
            app: "ios", edges: edges)
        #expect(under?.status == .differs && under?.cause == nil)
    }
}
