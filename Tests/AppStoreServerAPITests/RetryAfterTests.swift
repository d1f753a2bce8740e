import Foundation
import StoreHTTP
import Testing

@Suite struct RetryAfterTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func unixMillisecondsAsAppleDocuments() {
        #expect(RetryAfter.seconds(from: "1700000012500", now: now) == 12.5)
    }

    @Test func unixSeconds() {
        #expect(RetryAfter.seconds(from: "1700000030", now: now) == 30)
    }

    @Test func delaySeconds() {
        #expect(RetryAfter.seconds(from: "120", now: now) == 120)
        #expect(RetryAfter.seconds(from: " 7 ", now: now) == 7)
        #expect(RetryAfter.seconds(from: "1.5", now: now) == 1.5)
    }

    @Test(arguments: [
        "Tue, 14 Nov 2023 22:14:20 GMT",  // IMF-fixdate
        "Tuesday, 14-Nov-23 22:14:20 GMT",  // RFC 850
        "Tue Nov 14 22:14:20 2023",  // asctime
    ])
    func httpDates(value: String) {
        // 1_700_000_000 is 2023-11-14 22:13:20 UTC.
        #expect(RetryAfter.seconds(from: value, now: now) == 60)
    }

    @Test func asctimeWithPaddedDay() {
        let early = Date(timeIntervalSince1970: 1_699_228_800)  // 2023-11-06 00:00:00 UTC
        #expect(RetryAfter.seconds(from: "Mon Nov  6 00:01:00 2023", now: early) == 60)
    }

    @Test func pastTimesMeanNoWait() {
        #expect(RetryAfter.seconds(from: "1600000000000", now: now) == 0)
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 0)
    }

    @Test(arguments: ["", "soon", "-5", "12abc", "1.2.3", "Tue, 99 Nov 2023 25:00:00 GMT"])
    func garbageIsNotUnderstood(value: String) {
        #expect(RetryAfter.seconds(from: value, now: now) == nil)
    }

    /// Found by the hostile-input property test: Foundation's DateFormatter trapped (process killed) on this text.
    @Test(arguments: [
        "S\u{200D}un, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 G\u{200D}MT", "Sún, 06 Nov 1994",
    ])
    func nonASCIIDatesAreNotUnderstoodAndDoNotTrap(value: String) {
        #expect(RetryAfter.seconds(from: value, now: now) == nil)
    }
}
