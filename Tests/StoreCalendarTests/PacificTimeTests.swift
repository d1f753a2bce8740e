import Foundation
import StoreCalendar
import Testing

@Suite("Pacific months and days")
struct PacificTimeTests {
    static func utc(_ text: String) -> Date {
        guard let date = ISO8601DateFormatter().date(from: text) else {
            preconditionFailure("bad test instant \(text)")
        }
        return date
    }

    @Test func marchLosesAnHourToDaylightSaving() {
        let march = CalendarMonth(year: 2026, month: 3)
        #expect(march.pacificStart == Self.utc("2026-03-01T08:00:00Z"))  // midnight PST
        #expect(march.pacificEnd == Self.utc("2026-04-01T07:00:00Z"))  // midnight PDT
        #expect(march.pacificEnd.timeIntervalSince(march.pacificStart) == Double(31 * 24 - 1) * 3600)
    }

    @Test func novemberGainsTheHourBack() {
        let november = CalendarMonth(year: 2026, month: 11)
        #expect(november.pacificStart == Self.utc("2026-11-01T07:00:00Z"))  // midnight PDT, the long day
        #expect(november.pacificEnd == Self.utc("2026-12-01T08:00:00Z"))
        #expect(november.pacificEnd.timeIntervalSince(november.pacificStart) == Double(30 * 24 + 1) * 3600)
    }

    /// Instants on either side of a Pacific month's edge, and the month each belongs to.
    static let edges: [(String, String)] = [
        ("2026-11-01T06:59:59Z", "2026-10"),  // 23:59:59 PDT on Oct 31
        ("2026-11-01T07:00:00Z", "2026-11"),
        ("2026-03-01T07:59:59Z", "2026-02"),  // 23:59:59 PST on Feb 28
        ("2026-03-01T08:00:00Z", "2026-03"),
        ("2027-01-01T07:59:59Z", "2026-12"),  // New Year in UTC, still the old year in California
        ("2027-01-01T08:00:00Z", "2027-01"),
        ("1970-01-01T04:00:00Z", "1969-12"),  // before the epoch in Pacific time
    ]

    @Test(arguments: edges)
    func theMonthContainingAnInstant(instant: String, month: String) {
        #expect(CalendarMonth(pacificMonthOf: Self.utc(instant)).description == month)
    }

    @Test func theDayContainingAnInstantAcrossTheClockChanges() {
        #expect(PacificTime.date(containing: Self.utc("2026-03-08T09:59:59Z")).description == "2026-03-08")
        #expect(PacificTime.date(containing: Self.utc("2026-03-09T06:59:59Z")).description == "2026-03-08")
        #expect(PacificTime.date(containing: Self.utc("2026-11-01T09:30:00Z")).description == "2026-11-01")
        #expect(PacificTime.date(containing: Self.utc("2026-11-02T07:59:59Z")).description == "2026-11-01")
        #expect(PacificTime.date(containing: Self.utc("2026-11-02T08:00:00Z")).description == "2026-11-02")
    }
}
