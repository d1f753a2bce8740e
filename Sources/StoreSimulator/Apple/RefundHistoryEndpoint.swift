/// `GET /inApps/v2/refund/lookup/{transactionId}?revision=`: Get Refund History v2. The customer's refunded
/// transactions, ascending by `revocationDate`, at most 20 a page. The `revision` encodes how many of the
/// customer's refunds have been returned, so a later call with the final revision returns only newer ones. A customer
/// with several purchases (`ScenarioSpec.appleCustomerPlans`) gets the refunds of all of them, whichever is asked.
/// https://developer.apple.com/documentation/appstoreserverapi/get-refund-history
struct RefundHistoryEndpoint {
    static let pageSize = 20

    let state: SimulatorState

    func handle(_ request: StoreRequest, app: Int, sandbox: Bool, transactionId: String, faults: Set<FaultKind>)
        -> StoreReply
    {
        let plan: Int
        switch AppleCustomerLookup(state: state).find(transactionId, app: app, sandbox: sandbox) {
        case .failed(let reply): return reply
        case .found(let found): plan = found
        }
        let now = state.now
        let scenario = state.scenario
        let customer = scenario.customerPlans(of: plan)
        let lead = customer.first ?? plan
        var position = 0
        if let revision = request.parameter("revision"), !revision.isEmpty {
            guard let fields = state.pageTokens.decode("refunds", revision, count: 2), fields[0] == Int64(lead),
                fields[1] >= 0
            else { return AppleError.invalidRevision() }
            position = Int(fields[1])
        }
        let visible = refunds(of: customer, app: app, sandbox: sandbox, now: now)
        let start = min(position, visible.count)
        let end = min(start + Self.pageSize, visible.count)
        let payloads = ApplePayloads(state: state, spoilers: .init(faults))
        let asked = request.parameter("revision").flatMap { $0.isEmpty ? nil : $0 }
        let revision =
            (faults.contains(.repeatedPageToken) && end < visible.count ? asked : nil)
            ?? state.pageTokens.encode("refunds", [Int64(lead), Int64(end)])
        let wrongTypes = faults.contains(.wrongFieldTypes)
        return .json { json in
            json.object { object in
                object.array("signedTransactions") { list in
                    for (refund, index) in visible[start..<end] {
                        let signed = payloads.signedTransaction(
                            plan: Int(refund.plan), charge: Int(refund.charge), at: now, refund: refund)
                        list.string(signed)
                        // Odd data: Apple's page repeats a transaction.
                        if let index, OddRow.kind(ofRefund: index, rate: state.options.oddRows) == .repeated {
                            list.string(signed)
                        }
                    }
                }
                object.field("revision", revision)
                if wrongTypes {
                    object.field("hasMore", end < visible.count ? "true" : "false")
                } else {
                    object.field("hasMore", end < visible.count)
                }
            }
        }
    }

    /// The customer's refunds by `now`: the scenario's (with their index, for its odd rows) and those Apple granted
    /// on the customer's refund requests (no index), by revocation date.
    private func refunds(of customer: [Int], app: Int, sandbox: Bool, now: Int64)
        -> [(refund: RefundRecord, index: Int32?)]
    {
        let scenario = state.scenario
        var visible: [(refund: RefundRecord, index: Int32?)] = customer.flatMap { scenario.refunds(ofPlan: $0) }
            .map { (scenario.refunds[Int($0)], $0) }.filter { $0.refund.revokes && $0.refund.eventMillis <= now }
        if !sandbox {
            let plans = Set(customer.map { Int32($0) })
            visible += AppleRequestOutcomes(state: state).refunds(app: app, now: now, plans: plans).map { ($0, nil) }
        }
        if customer.count > 1 || visible.contains(where: { $0.index == nil }) {
            visible.sort {
                ($0.refund.eventMillis, $0.refund.plan, $0.refund.charge)
                    < ($1.refund.eventMillis, $1.refund.plan, $1.refund.charge)
            }
        }
        return visible
    }
}
