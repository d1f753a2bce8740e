/// Finds the customer (the purchase's `originalTransactionId`) that a transaction id in a URL names, within the
/// app the bearer token is for and the environment the URL addresses. Unknown, not yet happened, another
/// app's or the other environment's transactions are all "not found", as Apple answers them.
struct AppleCustomerLookup {
    /// The outcome of a lookup.
    enum Outcome {
        case found(plan: Int)
        case failed(StoreReply)
    }

    let state: SimulatorState

    func find(_ transactionId: String, app: Int, sandbox: Bool) -> Outcome {
        guard !transactionId.isEmpty, transactionId.allSatisfy(\.isNumber) else {
            return .failed(AppleError.invalidTransactionId())
        }
        let scenario = state.scenario
        guard let (plan, charge) = scenario.appleTransaction(transactionId) else {
            return .failed(AppleError.transactionIdNotFound())
        }
        let purchase = scenario.plans[plan]
        guard Int(purchase.app) == app, purchase.flags.contains(.sandbox) == sandbox,
            purchase.chargeMillis(charge, periods: scenario.periods(purchase)) <= state.now
        else { return .failed(AppleError.transactionIdNotFound()) }
        return .found(plan: plan)
    }
}
