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
        var visible = customer.flatMap { scenario.refunds(ofPlan: $0) }.filter {
            let refund = scenario.refunds[Int($0)]
            return refund.revokes && refund.eventMillis <= now
        }
        if customer.count > 1 {
            visible.sort { (scenario.refunds[Int($0)].eventMillis, $0) < (scenario.refunds[Int($1)].eventMillis, $1) }
        }
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
                    for index in visible[start..<end] {
                        let refund = scenario.refunds[Int(index)]
                        let signed = payloads.signedTransaction(
                            plan: Int(refund.plan), charge: Int(refund.charge), at: now, refund: refund)
                        list.string(signed)
                        // Odd data: Apple's page repeats a transaction.
                        if OddRow.kind(ofRefund: index, rate: state.options.oddRows) == .repeated {
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
}
