import Foundation
import Postgres
import Testing

@Suite("PostgresTimestamp")
struct PostgresTimestampTests {
    @Test(arguments: [
        ("2026-11-22 04:32:50+00", 1_795_321_970.0),
        ("2026-11-22 04:32:50.5+00", 1_795_321_970.5),
        ("2026-11-22T04:32:50.123456Z", 1_795_321_970.123456),
        ("2026-11-21 20:32:50-08", 1_795_321_970.0),
        ("2026-11-22 10:02:50+05:30", 1_795_321_970.0),
        ("1970-01-01 00:00:00+00", 0.0),
        ("1969-12-31 23:59:59+00", -1.0),
        ("2000-02-29 00:00:00+00", 951_782_400.0),
    ])
    func parses(_ text: String, _ expected: Double) throws {
        let date = try #require(PostgresTimestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - expected) < 0.000_001)
    }

    @Test(arguments: [
        "", "2026-13-01 00:00:00+00", "2026-11-22", "2026-11-22 04:32:50+", "2026-11-22 04:32:50.+00",
        "garbage of any kind!", "2026-11-22 04:32:50+00 trailing",
        // A day the month does not have, and offsets no time zone has: refused, not rolled over.
        "2026-02-31T00:00:00Z", "2026-02-29 00:00:00+00", "2026-04-31 00:00:00+00", "2026-11-22T04:32:50+99:99",
        "2026-11-22T04:32:50+14:75",
    ])
    func rejects(_ text: String) {
        #expect(PostgresTimestamp.parse(text) == nil)
    }

    @Test func formatsAndParsesBack() throws {
        for seconds in [0.0, -1.5, 1_795_321_970.123456, 4_102_444_799.999999, 951_782_400] {
            let date = Date(timeIntervalSince1970: seconds)
            let text = PostgresTimestamp.format(date)
            let back = try #require(PostgresTimestamp.parse(text))
            #expect(abs(back.timeIntervalSince1970 - seconds) < 0.000_001, "\(text)")
        }
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
    }

    @Test func infinityMapsToDistantDates() {
        #expect(PostgresTimestamp.parse("infinity") == .distantFuture)
        #expect(PostgresTimestamp.parse("-infinity") == .distantPast)
    }
}
