import Foundation
import Testing

@testable import RateLimiting

/// The window lengths sent with every `quota_acquire_batch` round trip: rounded up to the microsecond, written as
/// `%.6f` writes them (issue 39: without `String(format:)`).
@Suite struct WindowLengthTextTests {
    @Test func lengthsAreWrittenAsPrintfWouldWriteThem() {
        let seconds: [Double] = [0, 1, 0.3, 1.5, 0.0000001, 0.999_999_4, 59.999_999_9, 86_400, 3600.25, 1.0 / 3]
        for value in seconds {
            let expected = String(format: "%.6f", (value * 1e6).rounded(.up) / 1e6)
            #expect(PostgresQuotaGate<ContinuousClock>.microseconds(roundedUp: value) == expected, "\(value)")
        }
        #expect(PostgresQuotaGate<ContinuousClock>.microseconds(roundedUp: 1.000_000_1) == "1.000001")
    }
}
