/// The refunds Apple grants at the end of refund requests (``ConsumptionAnswers/outcomes(app:requests:now:seed:)``,
/// the `REFUND` notifications): refunds like any other, so Get Refund History lists them with the customer's others
/// and the ground truth counts them. Decided when asked, from the scenario, the answers and the clock.
struct AppleRequestOutcomes {
    let state: SimulatorState

    /// The refunds granted on app `app`'s (its index) refund requests by `now` (of `plans` only, when given),
    /// oldest first; none for a charge the scenario refunds itself.
    func refunds(app: Int, now: Int64, plans: Set<Int32>? = nil) -> [RefundRecord] {
        let scenario = state.scenario
        guard scenario.spec.consumptionRequests > 0, scenario.spec.apps[app].platform == .apple else { return [] }
        let slot = Scenario.notificationSlot(app: app, sandbox: false)
        let requests = scenario.notifications[slot].filter {
            $0.kind == .consumptionRequest && plans?.contains($0.plan) != false
        }
        guard !requests.isEmpty else { return [] }
        let payloads = ApplePayloads(state: state, spoilers: .init([]))
        return state.consumption.outcomes(
            app: scenario.spec.apps[app].id, requests: requests, now: now, seed: scenario.spec.seed
        ).filter { event in
            event.kind == .refund && event.millis <= now
                && !scenario.refunds(ofPlan: Int(event.plan)).contains {
                    scenario.refunds[Int($0)].charge == event.charge
                }
        }.map { payloads.requestRefund($0, plan: scenario.plans[Int($0.plan)]) }
    }

    /// The ground truth's Apple refunds with those granted on requests by `now` added, by revocation date.
    func truth(_ refunds: [GroundTruth.AppleRefund], now: Int64) -> [GroundTruth.AppleRefund] {
        let scenario = state.scenario
        var all = refunds
        for app in scenario.spec.apps.indices {
            all += self.refunds(app: app, now: now).map { scenario.appleRefund($0, now: now) }
        }
        all.sort { ($0.revocationDate, $0.transactionId) < ($1.revocationDate, $1.transactionId) }
        return all
    }
}
