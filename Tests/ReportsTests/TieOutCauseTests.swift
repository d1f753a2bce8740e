import Foundation
import StoreCalendar
import Testing

@testable import Reports

/// Why Google's report has an order the ledger did not refund in October 2026: each cause, and which one wins when
/// several could apply, worked out by hand. History begins Oct 6 00:00 UTC; gap 7 runs Oct 10 to Oct 12.
@Suite struct TieOutCauseTests {
    static let context = GoogleTieOut.Context(
        historyStart: date("2026-10-06T00:00:00Z"),
        gaps: [GoogleTieOut.Gap(id: 7, from: date("2026-10-10T00:00:00Z"), to: date("2026-10-12T00:00:00Z"))])

    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func sides(
        booked: String, ledgerDay: String? = nil, known: Bool = false, readUnrefunded: String? = nil
    ) -> GoogleTieOut.Sides {
        var sides = GoogleTieOut.Sides(order: "GPA.1")
        (sides.inReport, sides.bookedAt, sides.ledgerDay, sides.known) = (true, date(booked), ledgerDay, known)
        sides.readUnrefundedAt = readUnrefunded.map(date)
        return sides
    }

    static let gapNote =
        "gap 7: storerecon backfill google-voided --since 2026-10-10T00:00:00Z --until 2026-10-12T00:00:00Z "
        + "--app droid (or storerecon gaps acknowledge 7)"

    @Test(arguments: [
        // The ledger refunded it on Sep 30 (Pacific), September's last day: Google's lag, wherever it was booked.
        (
            TieOutCauseTests.sides(booked: "2026-10-02T00:00:00Z", ledgerDay: "2026-09-30"),
            TieOut.Cause?.some(.settlementLag),
            "in the ledger of 2026-09"
        ),
        // The ledger refunded it on Sep 12, Aug 12 or in November: another month (September's own line says whether
        // Google booked the Sep 12 refund here).
        (
            TieOutCauseTests.sides(booked: "2026-10-11T00:00:00Z", ledgerDay: "2026-09-12"), .otherMonth,
            "in the ledger of 2026-09"
        ),
        (
            TieOutCauseTests.sides(booked: "2026-10-11T00:00:00Z", ledgerDay: "2026-08-12"), .otherMonth,
            "in the ledger of 2026-08"
        ),
        (
            TieOutCauseTests.sides(booked: "2026-10-11T00:00:00Z", ledgerDay: "2026-11-02"), .otherMonth,
            "in the ledger of 2026-11"
        ),
        // Oct 2 is before history began, even for an order storerecon read.
        (
            TieOutCauseTests.sides(booked: "2026-10-02T00:00:00Z", known: true), .beforeHistory,
            "history begins 2026-10-06T00:00:00Z"
        ),
        // Oct 11 is inside gap 7, even for an order storerecon read.
        (TieOutCauseTests.sides(booked: "2026-10-11T00:00:00Z", known: true), .inGap, gapNote),
        // The gap's bounds are inside it.
        (TieOutCauseTests.sides(booked: "2026-10-12T00:00:00Z"), .inGap, gapNote),
        // Oct 20, read from the Orders API without a refund: no cause to name.
        (
            TieOutCauseTests.sides(booked: "2026-10-20T00:00:00Z", known: true), nil,
            "storerecon read the order; no refund was recorded"
        ),
        // Oct 20, read on Oct 15 while Google had not refunded it: refunded since without revocation.
        (
            TieOutCauseTests.sides(
                booked: "2026-10-20T00:00:00Z", known: true, readUnrefunded: "2026-10-15T09:00:00Z"),
            .notRevokedUnseen,
            "storerecon last read the order on 2026-10-15, before Google refunded it; the nightly google_orders job "
                + "reads it again"
        ),
        // Read unrefunded after the report booked the refund: Google's order and its report disagree.
        (
            TieOutCauseTests.sides(
                booked: "2026-10-20T00:00:00Z", known: true, readUnrefunded: "2026-10-22T09:00:00Z"),
            nil, "storerecon read the order; no refund was recorded"
        ),
        // Oct 20, never seen: a refund made without revocation.
        (TieOutCauseTests.sides(booked: "2026-10-20T00:00:00Z"), .notRevokedUnseen, ""),
    ])
    func eachCauseInItsOrder(sides: GoogleTieOut.Sides, cause: TieOut.Cause?, note: String) {
        let found = GoogleTieOut.reportOnlyCause(
            sides, month: CalendarMonth(year: 2026, month: 10), context: Self.context, app: "droid")
        #expect(found.0 == cause && found.1 == note)
    }

    @Test func withoutAnySyncEveryUnknownOrderIsBeforeHistory() {
        let found = GoogleTieOut.reportOnlyCause(
            Self.sides(booked: "2026-10-20T00:00:00Z"), month: CalendarMonth(year: 2026, month: 10),
            context: GoogleTieOut.Context(historyStart: nil, gaps: []), app: "droid")
        #expect(found.0 == .beforeHistory && found.1 == "no voided sync has run")
    }

    @Test func theLegendNamesEveryStatusAndCause() {
        let names = Set(TieOut.legend.map(\.name))
        #expect(names.isSuperset(of: TieOut.Status.allCases.map(\.rawValue)))
        #expect(names.isSuperset(of: TieOut.Cause.allCases.map(\.rawValue)))
        #expect(TieOut.legend.allSatisfy { !$0.meaning.isEmpty })
    }
}
