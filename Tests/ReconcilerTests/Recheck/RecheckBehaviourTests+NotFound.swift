import Foundation
import StoreSimulator
import TestSupport
import Testing

extension RecheckBehaviourTests {
    /// Apple's "not found, retryable" (4040002, 4040004, 4040006) still answered after the client's retries: each
    /// such subscription is reported and asked again next run, its stored state unchanged, and the others go on (the
    /// run used to stop at the first one).
    @Test func appleNotFoundRetryableAfterTheRetriesLeavesTheSubscriptionForTheNextRun() async throws {
        let spec = ScenarioSpec(
            seed: 34, subscriptions: 200, oneTimePurchases: 0, refunds: 0, historyDays: 40, futureDays: 10)
        try await Self.started(spec) { harness in
            harness.simulator.setFaults(
                FaultSettings(rates: [.notFoundRetryable: 1]), for: .appleSubscriptionStatuses)
            let before = try harness.rows()
            let results = try await harness.recheck()
            let apple = try #require(results[harness.stores.app(.apple).id])
            #expect(apple.exitCode == 1, "\(apple.error ?? "")")
            #expect((apple.counts["asked"] ?? 0) > 1)
            #expect(apple.counts["bad_answers"] == apple.counts["asked"])
            let after = try harness.rows()
            for (storeId, row) in before where row.app == apple.app {
                #expect(after[storeId] == row, "a subscription Apple did not find yet is unchanged")
            }
            #expect(results[harness.stores.app(.google).id]?.exitCode == 0)
        }
    }
}
