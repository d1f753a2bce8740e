import Foundation
import Reconciler
import Testing

extension RecheckScriptedTests {
    /// Asked once its expiry passed, a store may still grant access on the old expiry (the renewal is not settled
    /// yet). Checked after its expiry, such a row once fell out of every part of the due query and granted access
    /// for good; it stays watched until an answer with a later expiry or without access.
    @Test func anAnswerStillGrantingAccessPastItsExpiryIsAskedAgain() async throws {
        try await withHarness("recheck_past_expiry") { harness, app in
            try insert(harness, app: app.id, "unsettled", expiresIn: -3600)
            let expiry = harness.stores.now().addingTimeInterval(-3600)
            func answer(_ state: LifecycleState, entitled: Bool) -> [String: StatusReading] {
                let observation = StatusObservation(
                    state: state, storeState: "SUBSCRIPTION_STATE_\(state.rawValue.uppercased())", entitled: entitled,
                    expiresAt: expiry, autoRenew: entitled, productId: "com.example.basic.monthly",
                    orderId: "GPA.unsettled..0")
                return ["unsettled": .observed(observation)]
            }
            let first = try await run(harness, app: app, answer(.active, entitled: true))
            #expect(first.exitCode == 0 && first.counts["asked"] == 1, "\(first.error ?? "")")
            #expect(try #require(try harness.rows()["unsettled"]).entitled)

            // Within the watch interval nobody asks again; after it, the row is due although its expiry is past.
            harness.stores.simulator.clock.advance(millis: 3_600_000)
            let soon = try await run(harness, app: app, answer(.expired, entitled: false))
            #expect(soon.exitCode == 0 && (soon.counts["asked"] ?? 0) == 0, "\(soon.error ?? "")")
            harness.stores.simulator.clock.advance(millis: 12 * 3_600_000)
            let later = try await run(harness, app: app, answer(.expired, entitled: false))
            #expect(later.exitCode == 0 && later.counts["asked"] == 1, "\(later.error ?? "")")
            let row = try #require(try harness.rows()["unsettled"])
            #expect(row.state == "expired" && !row.entitled)

            // Settled: no flag is left, so the row is not asked again.
            harness.stores.simulator.clock.advance(millis: 13 * 3_600_000)
            let settled = try await run(harness, app: app, answer(.expired, entitled: false))
            #expect((settled.counts["asked"] ?? 0) == 0)
        }
    }
}
