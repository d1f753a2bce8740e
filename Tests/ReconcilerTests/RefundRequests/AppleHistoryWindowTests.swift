import Foundation
import Testing

@testable import Reconciler

/// The parts a window of Notification History is read in: `CONSUMPTION_REQUEST` reads the requests that can still be
/// answered (Apple's last 12 hours) before those already past their deadline.
@Suite("AppleRefundRequests.HistoryWindow")
struct AppleHistoryWindowTests {
    typealias Window = AppleRefundRequests.HistoryWindow

    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let hour: TimeInterval = 3600

    static func spans(_ window: Window) -> [[Date]] {
        window.spans.map { [$0.start, $0.end] }
    }

    @Test func aFirstRunReadsTheLastTwelveHoursFirstThenTheDayBefore() {
        let window = Window(
            type: .consumptionRequest, start: Self.now - 24 * Self.hour, end: Self.now,
            answerableFrom: Self.now - 12 * Self.hour)
        #expect(
            Self.spans(window) == [
                [Self.now - 12 * Self.hour, Self.now], [Self.now - 24 * Self.hour, Self.now - 12 * Self.hour],
            ])
    }

    @Test func aWindowWithinTheTwelveHoursIsReadWhole() {
        let window = Window(
            type: .consumptionRequest, start: Self.now - 600, end: Self.now, answerableFrom: Self.now - 12 * Self.hour)
        #expect(Self.spans(window) == [[Self.now - 600, Self.now]])
    }

    @Test func outcomesAreReadWhole() {
        let window = Window(type: .refund, start: Self.now - 24 * Self.hour, end: Self.now, answerableFrom: nil)
        #expect(Self.spans(window) == [[Self.now - 24 * Self.hour, Self.now]])
    }
}
