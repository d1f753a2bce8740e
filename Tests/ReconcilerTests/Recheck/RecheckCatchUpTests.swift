import Foundation
import Logging
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

/// A recheck after nights that did not run (an outage) reaches back to the last complete run, so every subscription
/// that expired meanwhile is asked about after its expiry, not only those of the configured lag's last day.
@Suite("Recheck after missed nights")
struct RecheckCatchUpTests {
    @Test func theWindowReachesBackToTheLastCompleteRunAtMostSixtyDays() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(ExpiryRecheck.lag(86_400, now: now, lastComplete: nil) == 86_400)
        #expect(ExpiryRecheck.lag(86_400, now: now, lastComplete: now.addingTimeInterval(-3_600)) == 86_400)
        #expect(ExpiryRecheck.lag(86_400, now: now, lastComplete: now.addingTimeInterval(-4 * 86_400)) == 4 * 86_400)
        #expect(ExpiryRecheck.lag(86_400, now: now, lastComplete: now.addingTimeInterval(-400 * 86_400)) == 60 * 86_400)
    }

    @Test func aLagGivenOnTheCommandLineIsTheWindowItself() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let week = now.addingTimeInterval(-7 * 86_400)
        let lines = Lines()
        let given = ExpiryRecheck.Options(RecheckConfig(), lag: .hours(2))
        #expect(ExpiryRecheck.reach(given, now: now, lastComplete: week, logger: lines.logger) == 7_200)
        let configured = ExpiryRecheck.Options(RecheckConfig())
        #expect(ExpiryRecheck.reach(configured, now: now, lastComplete: week, logger: lines.logger) == 7 * 86_400)
        #expect(lines.all.isEmpty)
    }

    @Test func anOutageLongerThanSixtyDaysIsSaidInTheLog() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let lines = Lines()
        let options = ExpiryRecheck.Options(RecheckConfig())
        let lag = ExpiryRecheck.reach(
            options, now: now, lastComplete: now.addingTimeInterval(-90 * 86_400), logger: lines.logger)
        #expect(lag == 60 * 86_400)
        #expect(lines.all.contains { $0.hasPrefix("warning: the last complete recheck started 90 days ago") })
    }

    @Test func theExpiriesOfAFourDayOutageAreAskedAboutAfterIt() async throws {
        let spec = ScenarioSpec(
            seed: 23, subscriptions: 2_000, oneTimePurchases: 0, refunds: 100, historyDays: 120, futureDays: 20,
            products: RecheckNightsTests.weekly.products)
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try RecheckHarness(simulator, prefix: "recheck_catchup")
            try harness.insertStarted(simulator.subscriptionTruth())
            let before = simulator.clock.nowMillis()
            for (app, result) in try await harness.recheck() {
                #expect(result.exitCode == 0, "\(app): \(result.error ?? "")")
            }
            let first = try harness.rows()
            // Four nights without a run, then one.
            simulator.clock.advance(millis: 4 * 86_400_000)
            let now = simulator.clock.nowMillis()
            for (app, result) in try await harness.recheck() {
                #expect(result.exitCode == 0, "\(app): \(result.error ?? "")")
            }
            let lagMillis = Int64(RecheckConfig().lag.seconds) * 1000
            // The expiries the first run knew, in the outage's days before the configured lag's last day.
            let outage = first.filter {
                guard let expires = $0.value.expiresMillis else { return false }
                return expires > before && expires < now - lagMillis
            }
            #expect(outage.count > 20, "too few expiries in the outage's days to test")
            let after = try harness.rows()
            let unasked = outage.filter { (after[$0.key]?.checkedMillis ?? 0) < ($0.value.expiresMillis ?? 0) }
            #expect(unasked.count == 0, "\(unasked.count) of \(outage.count) expired in the outage, never asked after")
        }
    }
}
