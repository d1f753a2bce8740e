import Foundation
import Testing

@testable import StoreSimulator

@Suite("Scenario generation")
struct ScenarioTests {
    @Test("the same seed gives the same ground truth; another seed another")
    func deterministic() throws {
        let spec = ScenarioSpec(seed: 21, subscriptions: 3000)
        let first = try ScenarioGenerator(spec: spec).generate()
        let second = try ScenarioGenerator(spec: spec).generate()
        let later = spec.anchorMillis + 10 * 86_400_000
        #expect(first.groundTruth(at: later) == second.groundTruth(at: later))
        #expect(
            first.subscriptionTruth(at: later, offset: 0, limit: 3000)
                == second.subscriptionTruth(at: later, offset: 0, limit: 3000))
        #expect(first.notifications == second.notifications)
        var other = spec
        other.seed = 22
        let third = try ScenarioGenerator(spec: other).generate()
        #expect(third.groundTruth(at: later) != first.groundTruth(at: later))
    }

    @Test("every Google subscription state and every Apple status appears")
    func statesCovered() throws {
        let scenario = try ScenarioGenerator(spec: ScenarioSpec(seed: 3, subscriptions: 4000, refunds: 800)).generate()
        var google: Set<String> = []
        var apple: Set<Int> = []
        for day in stride(from: -30, through: 30, by: 10) {
            let at = scenario.spec.anchorMillis + Int64(day) * 86_400_000
            for truth in scenario.subscriptionTruth(at: at, offset: 0, limit: 4000) {
                if let state = truth.googleState { google.insert(state) }
                if let status = truth.appleStatus { apple.insert(status) }
            }
        }
        let states = ["ACTIVE", "CANCELED", "IN_GRACE_PERIOD", "ON_HOLD", "PAUSED", "EXPIRED", "PENDING"]
        #expect(Set(states.map { "SUBSCRIPTION_STATE_" + $0 }).isSubset(of: google))
        #expect(google.contains("SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"))
        #expect(apple == [1, 2, 3, 4, 5])
    }

    @Test("ids parse back to their purchase; order ids follow Google's renewal pattern")
    func identifiers() throws {
        let scenario = try ScenarioGenerator(spec: ScenarioSpec(seed: 8, subscriptions: 100)).generate()
        let google = try #require(
            scenario.plans.indices.first { scenario.spec.apps[Int(scenario.plans[$0].app)].platform == .google })
        #expect(scenario.googlePlan(token: scenario.purchaseToken(plan: google)) == google)
        #expect(scenario.googlePlan(token: scenario.purchaseToken(plan: google) + "x") == nil)
        let base = scenario.orderId(plan: google, charge: 0)
        #expect(base.wholeMatch(of: /GPA\.\d{4}-\d{4}-\d{4}-\d{5}/) != nil)
        #expect(scenario.orderId(plan: google, charge: 1) == base + "..0")
        #expect(scenario.orderId(plan: google, charge: 3) == base + "..2")
        let apple = try #require(
            scenario.plans.indices.first { scenario.spec.apps[Int(scenario.plans[$0].app)].platform == .apple })
        let id = scenario.transactionId(plan: apple, charge: 0)
        #expect(scenario.appleTransaction(String(id))?.plan == apple)
    }

    @Test("a linked purchase token names a replaced purchase that stops granting when replaced")
    func replacements() throws {
        let scenario = try ScenarioGenerator(spec: ScenarioSpec(seed: 9, subscriptions: 3000)).generate()
        let successor = try #require(scenario.plans.indices.first { scenario.plans[$0].linkedFrom >= 0 })
        let old = Int(scenario.plans[successor].linkedFrom)
        let replacedAt = scenario.plans[old].endMillis
        #expect(scenario.plans[successor].startMillis == replacedAt)
        let after = try #require(scenario.googleState(plan: old, at: replacedAt))
        #expect(after.state == "EXPIRED")
        #expect(!after.entitled)
        #expect(after.cancellation == .replacement)
    }

    @Test("oneTimeDays: one-time purchases and their voids in the last days, subscriptions over the whole history")
    func oneTimeDays() throws {
        let day: Int64 = 86_400_000
        var spec = ScenarioSpec(
            seed: 12, subscriptions: 2000, oneTimePurchases: 3000, refunds: 1500, historyDays: 400, futureDays: 1)
        let whole = try ScenarioGenerator(spec: spec).generate()
        spec.oneTimeDays = 30
        let recent = try ScenarioGenerator(spec: spec).generate()
        let earliest = spec.anchorMillis - 30 * day
        // Left out, one-time purchases span the history as before.
        #expect(whole.plans.contains { $0.isOneTime && $0.startMillis < earliest - 300 * day })
        let oneTime = recent.plans.filter(\.isOneTime)
        #expect(oneTime.count == 3000)
        #expect(oneTime.allSatisfy { $0.startMillis >= earliest })
        // Subscriptions draw from their own random streams: they start as before.
        #expect(recent.plans.prefix(2000).map(\.startMillis) == whole.plans.prefix(2000).map(\.startMillis))
        #expect(recent.plans.prefix(2000).contains { $0.startMillis < earliest - 300 * day })
        // So every recorded void of a one-time purchase is inside Google's 30 days at the anchor.
        let voids = recent.groundTruth(at: spec.anchorMillis).googleVoids.filter { $0.recorded && !$0.isSubscription }
        #expect(voids.count > 300)
        #expect(voids.allSatisfy { $0.recordedTimeMillis >= earliest })
        let before = whole.groundTruth(at: spec.anchorMillis).googleVoids.filter { $0.recorded && !$0.isSubscription }
        #expect(before.contains { $0.recordedTimeMillis < earliest })
    }

    @Test("oneTimeDays in JSON: optional, left out of a spec that does not set it")
    func oneTimeDaysJSON() throws {
        let plain = try JSONDecoder().decode(ScenarioSpec.self, from: Data(#"{"seed": 4}"#.utf8))
        #expect(plain.oneTimeDays == nil)
        #expect(plain == ScenarioSpec(seed: 4))
        let encoded = try #require(String(data: try JSONEncoder().encode(plain), encoding: .utf8))
        #expect(!encoded.contains("oneTimeDays"))
        let set = try JSONDecoder().decode(ScenarioSpec.self, from: Data(#"{"seed": 4, "oneTimeDays": 30}"#.utf8))
        #expect(set.oneTimeDays == 30)
        #expect(try JSONDecoder().decode(ScenarioSpec.self, from: JSONEncoder().encode(set)) == set)
    }

    @Test(
        "RFC 3339 formatting with 0, 3, 6 and 9 fractional digits",
        arguments: [
            (0, "2026-11-01T07:00:00Z"), (3, "2026-11-01T07:00:00.000Z"), (6, "2026-11-01T07:00:00.000000Z"),
            (9, "2026-11-01T07:00:00.000000000Z"),
        ])
    func times(digits: Int, text: String) {
        #expect(TimeFormat.rfc3339(millis: 1_793_516_400_000, fractionDigits: digits) == text)
    }

    @Test("a million subscriptions fit in compact plans")
    func compactStorage() {
        #expect(MemoryLayout<PurchasePlan>.stride <= 56)
        #expect(MemoryLayout<NotificationEvent>.stride == 16)
        #expect(MemoryLayout<RefundRecord>.stride <= 48)
    }
}
