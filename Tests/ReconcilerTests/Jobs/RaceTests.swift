import Foundation
import Testing

@testable import Reconciler

/// The one way a body is raced against a stop or a deadline, and `GoogleVoidedSync.Summary`'s equality.
@Suite("Racing a body against a stop")
struct RaceTests {
    @Test(.timeLimit(.minutes(1))) func aBodyThatEndsFirstCancelsTheStop() async {
        let raced = await race({ 7 }, until: { try? await Task.sleep(for: .seconds(3600)) })
        #expect(raced.value == 7)
        #expect(!raced.stopped)
    }

    @Test(.timeLimit(.minutes(1))) func aStopThatEndsFirstCancelsTheBodyAndKeepsWhatItReturns() async {
        // The body waits until it is cancelled, which only the stop's end can do.
        let raced = await race(
            { () async -> String in
                do {
                    try await Task.sleep(for: .seconds(3600))
                    return "finished"
                } catch {
                    return "cancelled"
                }
            }, until: {})
        #expect(raced.value == "cancelled")
        #expect(raced.stopped)
    }

    @Test func summariesWithGapsEndingApartDiffer() {
        var first = GoogleVoidedSync.Summary()
        first.gap = (Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 86_400))
        var second = first
        #expect(first == second)
        second.gap = (Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 172_800))
        #expect(first != second)
    }
}
