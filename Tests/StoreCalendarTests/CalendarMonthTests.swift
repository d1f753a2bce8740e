import Foundation
import StoreCalendar
import Testing

@Suite("CalendarMonth")
struct CalendarMonthTests {
    @Test func parsesAndPrintsYYYYMM() throws {
        let month = try CalendarMonth("2026-10")
        #expect(month == CalendarMonth(year: 2026, month: 10))
        #expect(month.description == "2026-10")
        #expect(CalendarMonth(year: 987, month: 3).description == "0987-03")
    }

    @Test(arguments: ["2026-13", "2026-00", "2026-1", "26-10", "2026/10", "2026-10-01", " 2026-10", "２０２６-10", ""])
    func aBadMonthIsAnErrorNamingIt(text: String) {
        #expect(throws: CalendarError(text: text, expected: "YYYY-MM")) { try CalendarMonth(text) }
        #expect(
            CalendarError(text: text, expected: "YYYY-MM").description == "\"\(text)\" is not a month: expected YYYY-MM"
        )
    }

    @Test func aLongBadValueIsCut() {
        let text = String(repeating: "9", count: 100)
        let error = CalendarError(text: text, expected: "YYYY-MM")
        #expect(error.description == "\"\(String(repeating: "9", count: 40))\" is not a month: expected YYYY-MM")
    }

    @Test func nextAndPreviousCrossYears() {
        let december = CalendarMonth(year: 2026, month: 12)
        #expect(december.next == CalendarMonth(year: 2027, month: 1))
        #expect(CalendarMonth(year: 2027, month: 1).previous == december)
        #expect(december.advanced(by: -12) == CalendarMonth(year: 2025, month: 12))
        #expect(december.advanced(by: -23) == CalendarMonth(year: 2025, month: 1))
        #expect(december.advanced(by: 25) == CalendarMonth(year: 2029, month: 1))
        #expect(CalendarMonth(year: 1, month: 1).previous == CalendarMonth(year: 0, month: 12))
        #expect(CalendarMonth(year: 0, month: 1).previous == CalendarMonth(year: -1, month: 12))
        #expect(december < december.next && december.previous < december)
    }

    @Test(arguments: [
        (2024, 2, "2024-02-01", "2024-02-29", 29),
        (2026, 2, "2026-02-01", "2026-02-28", 28),
        (2000, 2, "2000-02-01", "2000-02-29", 29),
        (2100, 2, "2100-02-01", "2100-02-28", 28),
        (2026, 4, "2026-04-01", "2026-04-30", 30),
        (2026, 12, "2026-12-01", "2026-12-31", 31),
    ])
    func firstAndLastDay(year: Int, month: Int, first: String, last: String, days: Int) {
        let month = CalendarMonth(year: year, month: month)
        #expect(month.firstDay.description == first)
        #expect(month.lastDay.description == last)
        #expect(month.dayCount == days)
        #expect(CalendarMonth(containing: month.lastDay) == month)
    }

    @Test func travelsAsItsTextInJSON() throws {
        let months = [CalendarMonth(year: 2026, month: 10)]
        let json = try JSONEncoder().encode(months)
        #expect(String(decoding: json, as: UTF8.self) == #"["2026-10"]"#)
        #expect(try JSONDecoder().decode([CalendarMonth].self, from: json) == months)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([CalendarMonth].self, from: Data(#"["2026-13"]"#.utf8))
        }
    }
}
