/// `GET /inApps/v2/history/{transactionId}`: Get Transaction History v2, with `revision`, `sort`
/// (ASCENDING/DESCENDING by purchase date), `startDate`, `endDate`, `productId` and `revoked` filters; 20 a page.
/// https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history
struct TransactionHistoryEndpoint {
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
        let purchase = scenario.plans[plan]
        let periods = scenario.periods(purchase)
        let sort = request.parameter("sort") ?? "ASCENDING"
        guard sort == "ASCENDING" || sort == "DESCENDING" else { return AppleError.invalidSort() }
        let start = request.parameter("startDate").flatMap { Int64($0) } ?? .min
        let end = request.parameter("endDate").flatMap { Int64($0) } ?? .max
        let productIds = Set(request.parameters("productId"))
        let revoked = request.parameter("revoked").map { $0 == "true" }
        var charges = (0..<purchase.visibleCharges(at: now, periods: periods)).filter { charge in
            let at = purchase.chargeMillis(charge, periods: periods)
            guard at >= start, at < end else { return false }
            if !productIds.isEmpty, !productIds.contains(scenario.product(purchase, charge: charge).productId) {
                return false
            }
            if let revoked {
                let isRevoked = scenario.refunds(ofPlan: plan).contains { index in
                    let refund = scenario.refunds[Int(index)]
                    return Int(refund.charge) == charge && refund.revokes && refund.eventMillis <= now
                        && now < refund.reversedMillis
                }
                if isRevoked != revoked { return false }
            }
            return true
        }
        if sort == "DESCENDING" { charges.reverse() }
        var position = 0
        if let revision = request.parameter("revision"), !revision.isEmpty {
            guard let fields = state.pageTokens.decode("history2", revision, count: 2), fields[0] == Int64(plan),
                fields[1] >= 0
            else { return AppleError.invalidRevision() }
            position = min(Int(fields[1]), charges.count)
        }
        let pageEnd = min(position + Self.pageSize, charges.count)
        let payloads = ApplePayloads(state: state, spoilers: .init(faults))
        let appInfo = scenario.spec.apps[app]
        return .json { json in
            json.object { object in
                object.field("revision", state.pageTokens.encode("history2", [Int64(plan), Int64(pageEnd)]))
                object.field("hasMore", pageEnd < charges.count)
                object.field("bundleId", payloads.bundleId(purchase))
                object.field("appAppleId", appInfo.appAppleId ?? 0)
                object.field("environment", sandbox ? "Sandbox" : "Production")
                object.array("signedTransactions") { list in
                    for charge in charges[position..<pageEnd] {
                        list.string(payloads.signedTransaction(plan: plan, charge: charge, at: now))
                    }
                }
            }
        }
    }
}
