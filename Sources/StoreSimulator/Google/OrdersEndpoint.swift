/// Google Play's Orders API as the discovery document describes it:
///
/// - `GET /androidpublisher/v3/applications/{packageName}/orders/{orderId}` (`orders.get`): one `Order`, or 404;
/// - `GET /androidpublisher/v3/applications/{packageName}/orders:batchGet?orderIds=...` (`orders.batchget`):
///   `{"orders": [...]}` for 1 ... 1000 distinct ids; the whole call fails with 404 when any id is unknown or of
///   another package. Google's own clients send a `POST` with `X-HTTP-Method-Override: GET` and the query as a
///   form body when the URL would be too long; the router accepts that too.
///
/// `Money` is `{"currencyCode", "units" (a string), "nanos"}` with zero fields left out, as proto3 JSON does. Prices
/// are the scenario's regional ones (``Scenario/orderPrice(plan:charge:)``), VAT included in VAT countries. A full
/// void is the order's `refundEvent` (what was left of it); quantity-based parts are `partialRefundEvents`, each
/// `PENDING` until processed. An order whose refund is not processed yet is `PENDING_REFUND`.
struct OrdersEndpoint {
    let state: SimulatorState

    func get(app: Int, orderId: String) -> StoreReply {
        guard let order = order(app: app, orderId) else { return GoogleError.orderNotFound() }
        return .json { json in write(order, now: state.now, &json) }
    }

    func batchGet(_ request: StoreRequest, app: Int) -> StoreReply {
        let ids = request.parameters("orderIds")
        guard !ids.isEmpty else {
            return GoogleError.invalidArgument("Request must contain between 1 and 1000 order ids.")
        }
        guard ids.count <= 1000 else {
            return GoogleError.invalidArgument("Request must contain between 1 and 1000 order ids.")
        }
        guard Set(ids).count == ids.count else {
            return GoogleError.invalidArgument("Order ids must be distinct.")
        }
        var found: [(plan: Int, charge: Int)] = []
        for id in ids {
            guard let order = order(app: app, id) else { return GoogleError.orderNotFound() }
            found.append(order)
        }
        let now = state.now
        return .json { json in
            json.object { object in
                object.array("orders") { list in
                    for order in found { write(order, now: now, &list) }
                }
            }
        }
    }

    /// The plan and charge of an order of this app that exists by now.
    private func order(app: Int, _ orderId: String) -> (plan: Int, charge: Int)? {
        let scenario = state.scenario
        guard let (plan, charge) = scenario.googleOrder(orderId), Int(scenario.plans[plan].app) == app,
            scenario.plans[plan].chargeMillis(charge, periods: scenario.periods(scenario.plans[plan])) <= state.now
        else { return nil }
        return (plan, charge)
    }

    static func money(_ nanos: Int64, _ currency: String, _ json: inout JSONWriter) {
        json.object { money in
            money.field("currencyCode", currency)
            let (units, rest) = nanos.quotientAndRemainder(dividingBy: 1_000_000_000)
            if units != 0 { money.field("units", String(units)) }
            if rest != 0 { money.field("nanos", Int(rest)) }
        }
    }
}
