import Foundation
import Testing

@testable import StoreSimulator

@Suite("Subscription ground truth")
struct SubscriptionTruthTests {
    /// The truth's next-renewal product is the renewal info's `autoRenewProductId`: it names the lower product from
    /// the downgrade decision on, until the downgrade takes effect.
    @Test("Apple truth shows a scheduled downgrade exactly as the signed renewal info does")
    func scheduledDowngradeMatchesRenewalInfo() throws {
        let scenario = try ScenarioGenerator(spec: ScenarioSpec(seed: 5, subscriptions: 4000)).generate()
        let downgrades = scenario.plans.indices.filter {
            scenario.plans[$0].transition == .downgrade && scenario.plans[$0].firstCount > 1
        }
        let index = try #require(downgrades.first)
        let plan = scenario.plans[index]
        let periods = scenario.periods(plan)
        let decision = plan.downgradeDecisionMillis(periods: periods)
        let lower = scenario.spec.products[Int(plan.secondProduct)].productId
        let current = scenario.spec.products[Int(plan.product)].productId
        let before = try #require(scenario.subscriptionTruth(plan: index, at: decision - 1))
        let after = try #require(scenario.subscriptionTruth(plan: index, at: decision))
        let switched = try #require(scenario.subscriptionTruth(plan: index, at: plan.switchMillis + 1))
        #expect(before.autoRenewProductId == current && before.productId == current)
        #expect(after.autoRenewProductId == lower && after.productId == current)
        #expect(switched.autoRenewProductId == lower && switched.productId == lower)
        let google = try #require(
            scenario.plans.indices.first { scenario.spec.apps[Int(scenario.plans[$0].app)].platform == .google })
        #expect(
            scenario.subscriptionTruth(plan: google, at: scenario.plans[google].startMillis)?.autoRenewProductId == nil)
    }
}
