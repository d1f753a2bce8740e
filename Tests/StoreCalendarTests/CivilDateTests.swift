import Foundation
import StoreCalendar
import Testing

@Suite("CivilDate")
struct CivilDateTests {
    /// Day numbers known independently of the algorithm (1900-01-01 is 25,567 days before the epoch, 2000-01-01
    /// 10,957 days after it), and the leap days around them worked out by hand.
    static let known: [(String, Int)] = [
        ("1970-01-01", 0),
        ("1969-12-31", -1),
        ("1900-01-01", -25_567),
        ("1900-03-01", -25_567 + 31 + 28),  // 1900 is no leap year
        ("2000-01-01", 10_957),
        ("2000-02-29", 10_957 + 31 + 28),  // 2000 is one
        ("2000-03-01", 10_957 + 31 + 29),
        ("2001-01-01", 10_957 + 366),
    ]

    @Test(arguments: known)
    func dayNumbersBothWays(text: String, days: Int) throws {
        let date = try #require(CivilDate(iso: text))
        #expect(date.daysSinceEpoch == days)
        #expect(CivilDate(daysSinceEpoch: days) == date)
        #expect(CivilDate(daysSinceEpoch: days).description == text)
    }

    @Test func leapYears() {
        #expect(CivilDate.isLeap(2024) && CivilDate.isLeap(2000) && CivilDate.isLeap(2400))
        #expect(!CivilDate.isLeap(2026) && !CivilDate.isLeap(1900) && !CivilDate.isLeap(2100))
        #expect(CivilDate.days(inMonth: 2, of: 2024) == 29)
        #expect(CivilDate.days(inMonth: 2, of: 2100) == 28)
        #expect(CivilDate(year: 2024, month: 2, day: 29) != nil)
        #expect(CivilDate(year: 2026, month: 2, day: 29) == nil)
        #expect(CivilDate(year: 2100, month: 2, day: 29) == nil)
        #expect(CivilDate(iso: "2100-02-28")?.adding(days: 1).description == "2100-03-01")
        #expect(CivilDate(iso: "2024-02-28")?.adding(days: 1).description == "2024-02-29")
    }

    @Test func theYearTurns() throws {
        let last = try #require(CivilDate(iso: "2026-12-31"))
        #expect(last.adding(days: 1) == CivilDate(year: 2027, month: 1, day: 1))
        #expect(try #require(CivilDate(iso: "2027-01-01")).adding(days: -1) == last)
        #expect(last < last.adding(days: 1))
    }

    @Test(arguments: [
        "2026-1-01", "2026-13-01", "2026-00-10", "2026-04-31", "2026-02-29", "26-01-01", "2026/01/01",
        "2026-01-01T00:00:00Z", "", "yesterday",
    ])
    func rejectsWhatIsNotADay(text: String) {
        #expect(CivilDate(iso: text) == nil)
    }

    /// Every 7th day from 1601-01-01 to 2400-01-01 agrees with Foundation's Gregorian calendar in UTC, an implementation of
    /// its own.
    @Test func agreesWithFoundationsCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for days in stride(from: -134_774, through: 157_054, by: 7) {
            let parts = calendar.dateComponents(
                [.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
            let date = CivilDate(daysSinceEpoch: days)
            guard date.year == parts.year, date.month == parts.month, date.day == parts.day else {
                Issue.record("day \(days): \(date) but Foundation says \(parts)")
                return
            }
            #expect(date.daysSinceEpoch == days)
        }
    }
}
