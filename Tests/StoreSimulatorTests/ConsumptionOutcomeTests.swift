import Testing

@testable import StoreSimulator

/// Apple's decision on a refund request: the answer's preference when it came within 12 hours, else Apple alone
/// when they are over (as Google with its reviews); a prorated grant refunds what is left of the purchase.
@Suite("Apple refund request outcomes")
struct ConsumptionOutcomeTests {
    static let hour: Int64 = 3_600_000

    func answer(_ plan: Int32, _ preference: String?, at millis: Int64, consumption: Int64? = nil)
        -> ConsumptionAnswer
    {
        ConsumptionAnswer(
            app: "a", transactionId: "t\(plan)", body: "{}", calls: 1, millis: millis, plan: plan, charge: 0,
            preference: preference, consumption: consumption)
    }

    @Test func anAnswerDecidesWithinTwelveHoursAppleAloneOnceTheyAreOver() {
        let requests = (0..<6).map {
            NotificationEvent(millis: 0, plan: Int32($0), charge: 0, kind: .consumptionRequest, subtype: .none)
        }
        let answers = ConsumptionAnswers()
        answers.record(answer(0, "DECLINE", at: Self.hour))
        answers.record(answer(1, "GRANT_FULL", at: Self.hour))
        answers.record(answer(2, "GRANT_PRORATED", at: 2 * Self.hour, consumption: 10_000))
        answers.record(answer(3, nil, at: Self.hour))
        answers.record(answer(4, "GRANT_FULL", at: 13 * Self.hour))
        // Before the 12 hours are over: only the answers with a preference given in time have an outcome.
        let before = answers.outcomes(app: "a", requests: requests, now: 12 * Self.hour - 1, seed: 3)
            .sorted { $0.plan < $1.plan }
        #expect(before.map(\.plan) == [0, 1, 2])
        #expect(before.map(\.kind) == [.refundDeclined, .refund, .refund])
        #expect(before.map(\.millis) == [Self.hour + 1, Self.hour + 1, 2 * Self.hour + 1])
        // Then Apple decides the rest alone (facts only, a late answer, none), as it would with no answer at all.
        let after = answers.outcomes(app: "a", requests: requests, now: 12 * Self.hour, seed: 3)
            .sorted { $0.plan < $1.plan }
        let alone = ConsumptionAnswers().outcomes(app: "a", requests: requests, now: 12 * Self.hour, seed: 3)
            .sorted { $0.plan < $1.plan }
        #expect(after.map(\.plan) == [0, 1, 2, 3, 4, 5])
        #expect(after.dropFirst(3).map(\.millis) == [12 * Self.hour, 12 * Self.hour, 12 * Self.hour])
        #expect(Array(after.dropFirst(3)) == Array(alone.dropFirst(3)))
        #expect(Set(alone.map(\.kind)) == [.refund, .refundDeclined], "the seed decides both ways")
    }

    @Test func aProratedGrantRefundsTheUnconsumedOrUnusedShare() throws {
        var options = TestKeys.options(seed: 14, subscriptions: 200)
        options.scenario.sandboxShare = 0
        let scenario = try ScenarioGenerator(spec: options.scenario).generate()
        let state = SimulatorState(options: options, scenario: scenario, keys: try #require(TestKeys.shared))
        let apple = scenario.plans.indices.filter { scenario.spec.apps[Int(scenario.plans[$0].app)].platform == .apple }
        let oneTime = try #require(apple.first { scenario.plans[$0].isOneTime })
        let renewing = try #require(apple.first { !scenario.plans[$0].isOneTime })
        let plan = scenario.plans[renewing]
        let start = plan.chargeMillis(0, periods: scenario.periods(plan))
        let end = plan.expiresMillis(0, periods: scenario.periods(plan))
        try #require((end - start) % 4 == 0)
        for (index, millis, consumption) in [
            (oneTime, start, Int64(30_000)), (renewing, start + (end - start) / 4, nil),
        ] {
            state.consumption.record(
                ConsumptionAnswer(
                    app: scenario.spec.apps[Int(scenario.plans[index].app)].id, transactionId: "t\(index)", body: "{}",
                    calls: 1, millis: millis, plan: Int32(index),
                    charge: 0, preference: "GRANT_PRORATED", consumption: consumption))
        }
        let payloads = ApplePayloads(state: state, spoilers: .init([]))
        for (index, expected) in [(oneTime, Int32(70_000)), (renewing, Int32(75_000))] {
            let event = NotificationEvent(
                millis: end, plan: Int32(index), charge: 0, kind: .refund, subtype: .none)
            let refund = payloads.requestRefund(event, plan: scenario.plans[index])
            #expect(refund.kind == .prorated && refund.percentage == expected, "plan \(index)")
        }
        // Without an answer (Apple alone) the refund is full.
        let other = try #require(apple.first { $0 != oneTime && $0 != renewing })
        let event = NotificationEvent(millis: end, plan: Int32(other), charge: 0, kind: .refund, subtype: .none)
        #expect(payloads.requestRefund(event, plan: scenario.plans[other]).kind == .full)
    }
}
