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

    private func write(_ order: (plan: Int, charge: Int), now: Int64, _ json: inout JSONWriter) {
        let scenario = state.scenario
        let plan = scenario.plans[order.plan]
        let price = scenario.orderPrice(plan: order.plan, charge: order.charge)
        let created = plan.chargeMillis(order.charge, periods: scenario.periods(plan))
        let refunds = scenario.orderRefunds(plan: order.plan, charge: order.charge, at: now)
        let currency = price.currency
        let quantity = Int64(price.quantity)
        let total = price.unitNanos * quantity
        let tax = price.unitTaxNanos * quantity
        var refundedUnits: Int64 = 0
        var refundedTotal: Int64 = 0
        var refundedTax: Int64 = 0
        var pending = false
        var full: (RefundRecord, Int64)?
        var parts: [(RefundRecord, Int64, Bool)] = []
        for refund in refunds {
            if refund.kind == .partialQuantity {
                let units = Int64(refund.quantity)
                let processed = scenario.partProcessedMillis(refund) <= now
                pending = pending || !processed
                parts.append((refund, units, processed))
                refundedUnits += units
            } else if full == nil {
                let units = max(0, quantity - refundedUnits)
                full = (refund, units)
                refundedUnits += units
            }
        }
        for (_, units, processed) in parts where processed {
            refundedTotal += price.unitNanos * units
            refundedTax += price.unitTaxNanos * units
        }
        if let (_, units) = full {
            refundedTotal += price.unitNanos * units
            refundedTax += price.unitTaxNanos * units
        }
        // A refund without revocation: the whole order, a day after it was made (see the scenario).
        if full == nil, parts.isEmpty,
            let silent = scenario.refundWithoutRevocation(plan: order.plan, charge: order.charge), silent <= now
        {
            full = (
                RefundRecord(
                    plan: Int32(order.plan), charge: UInt16(order.charge), kind: .full, reason: 0, eventMillis: silent,
                    recordedMillis: silent), quantity
            )
            refundedTotal += total
            refundedTax += tax
        }
        let state: String =
            pending ? "PENDING_REFUND" : full != nil ? "REFUNDED" : parts.isEmpty ? "PROCESSED" : "PARTIALLY_REFUNDED"
        let lastEvent = ([created] + refunds.map(\.eventMillis) + [full?.0.eventMillis ?? created]).max() ?? created
        json.object { object in
            object.field("orderId", scenario.orderId(plan: order.plan, charge: order.charge))
            object.field("purchaseToken", scenario.purchaseToken(plan: order.plan))
            object.field("state", state)
            object.field("createTime", TimeFormat.rfc3339(millis: created))
            object.field("lastEventTime", TimeFormat.rfc3339(millis: lastEvent))
            object.object("buyerAddress") { $0.field("buyerCountry", price.country) }
            object.key("total")
            Self.money(total, currency, &object)
            object.key("tax")
            Self.money(tax, currency, &object)
            // Google keeps 15 % of what is left after tax and refunds, rounded to the minor unit.
            let net = (total - refundedTotal) - (tax - refundedTax)
            object.key("developerRevenueInBuyerCurrency")
            Self.money(Scenario.roundToMinor(net * 85 / 100, currency: currency), currency, &object)
            object.object("orderDetails") { $0.field("taxInclusive", true) }
            object.field("salesChannel", "IN_APP")
            object.array("lineItems") { items in
                items.object { item in
                    let product = scenario.product(plan, charge: order.charge)
                    item.field("productId", product.productId)
                    item.field("productTitle", product.productId)
                    item.key("listingPrice")
                    Self.money(price.unitNanos, currency, &item)
                    item.key("total")
                    Self.money(total, currency, &item)
                    item.key("tax")
                    Self.money(tax, currency, &item)
                    if plan.isOneTime {
                        item.object("oneTimePurchaseDetails") { $0.field("quantity", price.quantity) }
                    } else {
                        item.object("subscriptionDetails") { details in
                            details.field("basePlanId", "base")
                            details.field("servicePeriodStartTime", TimeFormat.rfc3339(millis: created))
                            details.field(
                                "servicePeriodEndTime",
                                TimeFormat.rfc3339(
                                    millis: plan.expiresMillis(order.charge, periods: scenario.periods(plan))))
                        }
                    }
                }
            }
            object.object("orderHistory") { history in
                history.object("processedEvent") { $0.field("eventTime", TimeFormat.rfc3339(millis: created)) }
                if let (refund, units) = full {
                    // What the full refund states: its own units, or (one order in two) every unit refunded so far.
                    let stated =
                        scenario.statesCumulativeRefund(plan: order.plan)
                        ? units + parts.filter(\.2).reduce(0) { $0 + $1.1 } : units
                    history.object("refundEvent") { event in
                        event.field("eventTime", TimeFormat.rfc3339(millis: refund.eventMillis))
                        event.field("refundReason", refund.reason == 7 ? "CHARGEBACK" : "OTHER")
                        event.object("refundDetails") { details in
                            details.key("total")
                            Self.money(price.unitNanos * stated, currency, &details)
                            details.key("tax")
                            Self.money(price.unitTaxNanos * stated, currency, &details)
                        }
                    }
                }
                if !parts.isEmpty {
                    history.array("partialRefundEvents") { events in
                        for (refund, units, processed) in parts {
                            events.object { event in
                                event.field(
                                    "createTime", TimeFormat.rfc3339(millis: scenario.partCreatedMillis(refund)))
                                if processed {
                                    event.field(
                                        "processTime",
                                        TimeFormat.rfc3339(millis: scenario.partProcessedMillis(refund)))
                                }
                                event.field("state", processed ? "PROCESSED_SUCCESSFULLY" : "PENDING")
                                event.object("refundDetails") { details in
                                    details.key("total")
                                    Self.money(price.unitNanos * units, currency, &details)
                                    details.key("tax")
                                    Self.money(price.unitTaxNanos * units, currency, &details)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
