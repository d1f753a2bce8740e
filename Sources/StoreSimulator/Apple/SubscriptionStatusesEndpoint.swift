/// `GET /inApps/v1/subscriptions/{transactionId}`: Get All Subscription Statuses, with the optional repeated
/// `status` filter. https://developer.apple.com/documentation/appstoreserverapi/get-all-subscription-statuses
struct SubscriptionStatusesEndpoint {
    let state: SimulatorState

    func handle(_ request: StoreRequest, app: Int, sandbox: Bool, transactionId: String, faults: Set<FaultKind>)
        -> StoreReply
    {
        let plan: Int
        switch AppleCustomerLookup(state: state).find(transactionId, app: app, sandbox: sandbox) {
        case .failed(let reply): return reply
        case .found(let found): plan = found
        }
        var wanted: Set<Int> = []
        for text in request.parameters("status") {
            guard let value = Int(text), (1...5).contains(value) else { return AppleError.invalidStatus() }
            wanted.insert(value)
        }
        let now = state.now
        let scenario = state.scenario
        let purchase = scenario.plans[plan]
        let payloads = ApplePayloads(state: state, spoilers: .init(faults))
        let status = purchase.isOneTime ? nil : scenario.appleState(plan: plan, at: now)
        let wrongTypes = faults.contains(.wrongFieldTypes)
        let appInfo = scenario.spec.apps[app]
        return .json { json in
            json.object { object in
                object.field("environment", sandbox ? "Sandbox" : "Production")
                object.field("bundleId", payloads.bundleId(purchase))
                object.field("appAppleId", appInfo.appAppleId ?? 0)
                object.array("data") { data in
                    guard let status, wanted.isEmpty || wanted.contains(status.status) else { return }
                    data.object { group in
                        group.field(
                            "subscriptionGroupIdentifier", scenario.product(purchase, charge: status.charge).group)
                        group.array("lastTransactions") { list in
                            list.object { item in
                                if wrongTypes {
                                    item.field("status", String(status.status))
                                } else {
                                    item.field("status", status.status)
                                }
                                item.field("originalTransactionId", String(scenario.originalTransactionId(plan: plan)))
                                item.field(
                                    "signedTransactionInfo",
                                    payloads.signedTransaction(plan: plan, charge: status.charge, at: now))
                                item.field(
                                    "signedRenewalInfo", ifPresent: payloads.signedRenewalInfo(plan: plan, at: now))
                            }
                        }
                    }
                }
            }
        }
    }
}
