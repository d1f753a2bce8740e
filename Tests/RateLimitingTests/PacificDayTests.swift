import Foundation
import Postgres
import RateLimiting
import Testing

@Suite("PacificDay")
struct PacificDayTests {
    static func utc(_ text: String) -> Date {
        guard let date = PostgresTimestamp.parse(text) else { preconditionFailure("bad test timestamp \(text)") }
        return date
    }

    /// Instants around both 2026 daylight-saving changes, and the Pacific day each belongs to.
    static let instants: [(String, String)] = [
        ("2026-03-08T07:59:59.999999Z", "2026-03-07"),  // 23:59:59 PST
        ("2026-03-08T08:00:00Z", "2026-03-08"),  // midnight PST: the short day begins
        ("2026-03-08T09:59:59Z", "2026-03-08"),  // 01:59:59 PST
        ("2026-03-08T10:00:00Z", "2026-03-08"),  // 03:00 PDT: the clocks jumped
        ("2026-03-09T06:59:59.999999Z", "2026-03-08"),  // 23:59:59 PDT
        ("2026-03-09T07:00:00Z", "2026-03-09"),  // midnight PDT
        ("2026-11-01T06:59:59Z", "2026-10-31"),
        ("2026-11-01T07:00:00Z", "2026-11-01"),  // midnight PDT: the long day begins
        ("2026-11-01T08:30:00Z", "2026-11-01"),  // 01:30 PDT
        ("2026-11-01T09:30:00Z", "2026-11-01"),  // 01:30 PST, the second time round
        ("2026-11-02T07:59:59.999999Z", "2026-11-01"),  // 23:59:59 PST
        ("2026-11-02T08:00:00Z", "2026-11-02"),
        ("2026-12-31T23:00:00Z", "2026-12-31"),
        ("2027-01-01T08:00:00Z", "2027-01-01"),
    ]

    @Test(arguments: instants)
    func theDayContainingAnInstant(instant: String, day: String) {
        #expect(PacificDay(containing: Self.utc(instant)).description == day)
    }

    @Test func theDayDaylightSavingBeginsLasts23Hours() {
        let day = PacificDay(year: 2026, month: 3, day: 8)
        #expect(day.start == Self.utc("2026-03-08T08:00:00Z"))
        #expect(day.end == Self.utc("2026-03-09T07:00:00Z"))
        #expect(day.length == .seconds(23 * 3600))
        #expect(day.next == PacificDay(year: 2026, month: 3, day: 9))
    }

    @Test func theDayDaylightSavingEndsLasts25Hours() {
        let day = PacificDay(year: 2026, month: 11, day: 1)
        #expect(day.start == Self.utc("2026-11-01T07:00:00Z"))
        #expect(day.end == Self.utc("2026-11-02T08:00:00Z"))
        #expect(day.length == .seconds(25 * 3600))
    }

    @Test func anOrdinaryDayLasts24HoursAndTheYearTurns() {
        let day = PacificDay(year: 2026, month: 12, day: 31)
        #expect(day.length == .seconds(24 * 3600))
        #expect(day.next == PacificDay(year: 2027, month: 1, day: 1))
        #expect(day < day.next)
        #expect(day.start == Self.utc("2026-12-31T08:00:00Z"))
    }

    @Test func parsesWhatPostgresPrints() {
        #expect(PacificDay(isoDate: "2026-03-08") == PacificDay(year: 2026, month: 3, day: 8))
        #expect(PacificDay(isoDate: "2026-13-08") == nil)
        #expect(PacificDay(isoDate: "yesterday") == nil)
    }
}
