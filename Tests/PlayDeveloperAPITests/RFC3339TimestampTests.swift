import Foundation
import PlayDeveloperAPI
import Testing

@Suite struct RFC3339TimestampTests {
    // 2026-11-20T10:15:30Z
    static let base: Int64 = 1_795_169_730

    @Test(
        arguments: [
            ("2026-11-20T10:15:30Z", base, 0),
            ("2026-11-20T10:15:30.123Z", base, 123_000_000),
            ("2026-11-20T10:15:30.123456Z", base, 123_456_000),
            ("2026-11-20T10:15:30.123456789Z", base, 123_456_789),
            ("2026-11-20T10:15:30.000000001z", base, 1),
            ("2026-11-20t10:15:30Z", base, 0),
            ("2026-11-20T02:15:30-08:00", base, 0),
            ("2026-11-20T15:45:30.5000+05:30", nil, 0),
            ("2026-11-20T15:45:30+05:30", base, 0),
            ("2026-11-20T10:15:30+00:00", base, 0),
            ("2026-11-21T00:15:30.999+14:00", base, 999_000_000),
        ] as [(String, Int64?, Int32)])
    func parses(text: String, seconds: Int64?, nanos: Int32) {
        let parsed = RFC3339Timestamp(text)
        if let seconds {
            #expect(parsed == RFC3339Timestamp(secondsSinceEpoch: seconds, nanoseconds: nanos))
        } else {
            #expect(parsed == nil)
        }
    }

    @Test(arguments: [
        "", "garbage", "2026-11-20", "2026-11-20T10:15:30", "2026-11-20 10:15:30Z", "2026-11-20T10:15:30.Z",
        "2026-11-20T10:15:30.1Z", "2026-11-20T10:15:30.12Z", "2026-11-20T10:15:30.1234Z",
        "2026-11-20T10:15:30.1234567890Z",
        "2026-13-20T10:15:30Z", "2026-02-30T10:15:30Z", "2025-02-29T10:15:30Z", "2026-11-20T24:00:00Z",
        "2026-11-20T10:60:00Z", "2026-11-20T10:15:60Z", "2026-11-20T10:15:30+0800", "2026-11-20T10:15:30+08",
        "2026-11-20T10:15:30+24:00", "2026-11-20T10:15:30Z ", " 2026-11-20T10:15:30Z", "2026-11-20T10:15:30ZZ",
        "+026-11-20T10:15:30Z", "2026-1a-20T10:15:30Z", "2026-11-20T10:15:30.12a456Z", "２026-11-20T10:15:30Z",
        "2026-00-10T10:15:30Z", "2026-11-00T10:15:30Z",
    ])
    func rejectsGarbage(text: String) {
        #expect(RFC3339Timestamp(text) == nil)
    }

    @Test func leapDayAndEpochEdges() throws {
        #expect(RFC3339Timestamp("2024-02-29T00:00:00Z")?.secondsSinceEpoch == 1_709_164_800)
        #expect(RFC3339Timestamp("1970-01-01T00:00:00Z")?.secondsSinceEpoch == 0)
        #expect(RFC3339Timestamp("1969-12-31T23:59:59.5Z") == nil)
        #expect(
            RFC3339Timestamp("1969-12-31T23:59:59.500Z")
                == RFC3339Timestamp(secondsSinceEpoch: -1, nanoseconds: 500_000_000))
        #expect(RFC3339Timestamp("2000-02-29T12:00:00Z") != nil)
        #expect(RFC3339Timestamp("1900-02-29T12:00:00Z") == nil)
    }

    @Test func agreesWithFoundation() throws {
        let formatter = ISO8601DateFormatter()
        for text in [
            "2026-11-20T10:15:30Z", "2031-03-01T00:00:00Z", "1999-12-31T23:59:59Z", "2026-06-15T12:00:00+02:00",
        ] {
            let ours = try #require(RFC3339Timestamp(text))
            let theirs = try #require(formatter.date(from: text))
            #expect(ours.date == theirs, "\(text)")
        }
    }

    @Test(arguments: [
        "2026-11-20T10:15:30Z", "2026-11-20T10:15:30.120Z", "2026-11-20T10:15:30.123456Z",
        "2026-11-20T10:15:30.000000001Z", "1969-12-31T23:59:59.500Z",
    ])
    func canonicalTextRoundTrips(text: String) throws {
        let parsed = try #require(RFC3339Timestamp(text))
        #expect(parsed.description == text)
        #expect(RFC3339Timestamp(parsed.description) == parsed)
    }

    @Test func ordersAndConverts() throws {
        let earlier = try #require(RFC3339Timestamp("2026-11-20T10:15:30.999999999Z"))
        let later = try #require(RFC3339Timestamp("2026-11-20T02:15:31-08:00"))
        #expect(earlier < later)
        #expect(earlier.millisecondsSinceEpoch == Self.base * 1000 + 999)
    }

    @Test func decodesAndNamesBadFields() throws {
        struct Holder: Decodable { var time: RFC3339Timestamp }
        let good = try JSONDecoder().decode(Holder.self, from: Data(#"{"time":"2026-11-20T10:15:30Z"}"#.utf8))
        #expect(good.time.secondsSinceEpoch == Self.base)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Holder.self, from: Data(#"{"time":"yesterday"}"#.utf8))
        }
    }

    /// Found by the hostile-input property test: year 0000 with a positive offset parsed to an instant before year 1,
    /// whose text form ("00-1-12-31T...") did not parse back.
    @Test func instantsOutsideYears1To9999AreRejected() {
        #expect(RFC3339Timestamp("0000-12-31T00:01:00+00:02") == nil)
        #expect(RFC3339Timestamp("0001-01-01T00:00:00+00:01") == nil)
        #expect(RFC3339Timestamp("9999-12-31T23:59:59-00:01") == nil)
        #expect(RFC3339Timestamp("0001-01-01T00:00:00Z")?.description == "0001-01-01T00:00:00Z")
        #expect(RFC3339Timestamp("9999-12-31T23:59:59.999999999Z")?.description == "9999-12-31T23:59:59.999999999Z")
    }
}
