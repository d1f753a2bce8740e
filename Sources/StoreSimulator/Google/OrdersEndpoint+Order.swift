extension OrdersEndpoint {
    /// One order as `orders.get` writes it, as it stands at `now`.
    func write(_ order: (plan: Int, charge: Int), now: Int64, _ json: inout JSONWriter) {
        let scenario = state.scenario
        let plan = scenario.plans[order.plan]
        let price = scenario.orderPrice(plan: order.plan, charge: order.charge)
        let created = plan.chargeMillis(order.charge, periods: scenario.periods(plan))
        let orderId = scenario.orderId(plan: order.plan, charge: order.charge)
        let review = RefundReviewOutcomes(state: state).void(orderId: orderId, now: now)
        let refunds = OrderRefunds(scenario: scenario, order: order, price: price, now: now, review: review)
        let currency = price.currency
        let total = price.unitNanos * Int64(price.quantity)
        let tax = price.unitTaxNanos * Int64(price.quantity)
        let lastEvent = ([created] + refunds.all.map(\.eventMillis) + [refunds.full?.0.eventMillis ?? created]).max()
        json.object { object in
            object.field("orderId", orderId)
            object.field("purchaseToken", scenario.purchaseToken(plan: order.plan))
            object.field("state", refunds.state)
            object.field("createTime", TimeFormat.rfc3339(millis: created))
            object.field("lastEventTime", TimeFormat.rfc3339(millis: lastEvent ?? created))
            object.object("buyerAddress") { $0.field("buyerCountry", price.country) }
            object.key("total")
            Self.money(total, currency, &object)
            object.key("tax")
            Self.money(tax, currency, &object)
            // Google keeps 15 % of what is left after tax and refunds, rounded to the minor unit.
            let net = (total - refunds.refundedTotal) - (tax - refunds.refundedTax)
            object.key("developerRevenueInBuyerCurrency")
            Self.money(Scenario.roundToMinor(net * 85 / 100, currency: currency), currency, &object)
            object.object("orderDetails") { $0.field("taxInclusive", true) }
            object.field("salesChannel", "IN_APP")
            object.array("lineItems") { items in
                items.object { writeLineItem(order, price: price, created: created, &$0) }
            }
            object.object("orderHistory") { history in
                history.object("processedEvent") { $0.field("eventTime", TimeFormat.rfc3339(millis: created)) }
                writeRefundEvents(refunds, order: order, price: price, &history)
            }
        }
    }

    /// The order's one line item: the product, its prices, and its purchase or service period.
    private func writeLineItem(
        _ order: (plan: Int, charge: Int), price: Scenario.OrderPrice, created: Int64, _ item: inout JSONWriter
    ) {
        let scenario = state.scenario
        let plan = scenario.plans[order.plan]
        let product = scenario.product(plan, charge: order.charge)
        item.field("productId", product.productId)
        item.field("productTitle", product.productId)
        item.key("listingPrice")
        Self.money(price.unitNanos, price.currency, &item)
        item.key("total")
        Self.money(price.unitNanos * Int64(price.quantity), price.currency, &item)
        item.key("tax")
        Self.money(price.unitTaxNanos * Int64(price.quantity), price.currency, &item)
        if plan.isOneTime {
            item.object("oneTimePurchaseDetails") { $0.field("quantity", price.quantity) }
        } else {
            item.object("subscriptionDetails") { details in
                details.field("basePlanId", "base")
                details.field("servicePeriodStartTime", TimeFormat.rfc3339(millis: created))
                details.field(
                    "servicePeriodEndTime",
                    TimeFormat.rfc3339(millis: plan.expiresMillis(order.charge, periods: scenario.periods(plan))))
            }
        }
    }

    /// The order history's `refundEvent` and `partialRefundEvents`.
    private func writeRefundEvents(
        _ refunds: OrderRefunds, order: (plan: Int, charge: Int), price: Scenario.OrderPrice,
        _ history: inout JSONWriter
    ) {
        let scenario = state.scenario
        func details(units: Int64, _ event: inout JSONWriter) {
            event.object("refundDetails") { details in
                details.key("total")
                Self.money(price.unitNanos * units, price.currency, &details)
                details.key("tax")
                Self.money(price.unitTaxNanos * units, price.currency, &details)
            }
        }
        if let (refund, units) = refunds.full {
            // What the full refund states: its own units, or (one order in two) every unit refunded so far.
            let stated =
                scenario.statesCumulativeRefund(plan: order.plan)
                ? units + refunds.parts.filter(\.2).reduce(0) { $0 + $1.1 } : units
            history.object("refundEvent") { event in
                event.field("eventTime", TimeFormat.rfc3339(millis: refund.eventMillis))
                event.field("refundReason", refund.reason == 7 ? "CHARGEBACK" : "OTHER")
                details(units: stated, &event)
            }
        }
        guard !refunds.parts.isEmpty else { return }
        history.array("partialRefundEvents") { events in
            for (refund, units, processed) in refunds.parts {
                events.object { event in
                    event.field("createTime", TimeFormat.rfc3339(millis: scenario.partCreatedMillis(refund)))
                    if processed {
                        event.field("processTime", TimeFormat.rfc3339(millis: scenario.partProcessedMillis(refund)))
                    }
                    event.field("state", processed ? "PROCESSED_SUCCESSFULLY" : "PENDING")
                    details(units: units, &event)
                }
            }
        }
    }
}

/// What an order's refunds come to at a moment: its full refund and the units it covers, its quantity-based parts
/// (units, processed yet), and the refunded amounts processed so far.
struct OrderRefunds {
    /// The scenario's refunds of the order by then.
    let all: [RefundRecord]
    /// The full refund and the units left for it.
    var full: (RefundRecord, Int64)?
    /// The parts: the refund, its units, whether it is processed.
    var parts: [(RefundRecord, Int64, Bool)] = []
    /// Whether a part is not processed yet.
    var pending = false
    var refundedTotal: Int64 = 0
    var refundedTax: Int64 = 0

    /// `review`: the void a refund review made of the order, if any.
    init(
        scenario: Scenario, order: (plan: Int, charge: Int), price: Scenario.OrderPrice, now: Int64,
        review: RefundRecord? = nil
    ) {
        all = scenario.orderRefunds(plan: order.plan, charge: order.charge, at: now) + (review.map { [$0] } ?? [])
        let quantity = Int64(price.quantity)
        var refundedUnits: Int64 = 0
        for refund in all {
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
        let refundedUnitsProcessed = parts.filter(\.2).reduce(0) { $0 + $1.1 } + (full?.1 ?? 0)
        // A refund without revocation: the whole order, a day after it was made (see the scenario).
        if full == nil, parts.isEmpty,
            let silent = scenario.refundWithoutRevocation(plan: order.plan, charge: order.charge), silent <= now
        {
            full = (
                RefundRecord(
                    plan: Int32(order.plan), charge: UInt16(order.charge), kind: .full, reason: 0, eventMillis: silent,
                    recordedMillis: silent), quantity
            )
            refundedTotal = price.unitNanos * quantity
            refundedTax = price.unitTaxNanos * quantity
        } else {
            refundedTotal = price.unitNanos * refundedUnitsProcessed
            refundedTax = price.unitTaxNanos * refundedUnitsProcessed
        }
    }

    /// The order's `state`.
    var state: String {
        pending ? "PENDING_REFUND" : full != nil ? "REFUNDED" : parts.isEmpty ? "PROCESSED" : "PARTIALLY_REFUNDED"
    }
}
