/// `GET /androidpublisher/v3/applications/{packageName}/purchases/subscriptionsv2/tokens/{token}`: a
/// `SubscriptionPurchaseV2` for the subscription's state on the simulator clock.
/// https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2/get
struct SubscriptionsV2Endpoint {
    let state: SimulatorState

    func handle(app: Int, token: String, faults: Set<FaultKind>) -> StoreReply {
        let scenario = state.scenario
        let now = state.now
        guard let index = scenario.googlePlan(token: token), Int(scenario.plans[index].app) == app,
            !scenario.plans[index].isOneTime, let subscription = scenario.googleState(plan: index, at: now)
        else { return GoogleError.purchaseTokenNotFound() }
        let plan = scenario.plans[index]
        let product = scenario.spec.products[Int(subscription.product)]
        let wrongTypes = faults.contains(.wrongFieldTypes)
        return .json { json in
            json.object { object in
                object.field("kind", "androidpublisher#subscriptionPurchaseV2")
                object.field("regionCode", scenario.regionCode(plan: index))
                object.field("startTime", time(plan.startMillis, index, 0))
                object.field("subscriptionState", "SUBSCRIPTION_STATE_" + subscription.state)
                if plan.linkedFrom >= 0 {
                    object.field("linkedPurchaseToken", scenario.purchaseToken(plan: Int(plan.linkedFrom)))
                }
                let acknowledged = !plan.flags.contains(.unacknowledged)
                object.field(
                    "acknowledgementState",
                    acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING")
                writeContexts(subscription, &object)
                if plan.flags.contains(.testPurchase) { object.object("testPurchase") { _ in } }
                let writeItem = { (list: inout JSONWriter) in
                    list.object { item in
                        item.field("productId", product.productId)
                        if let expiry = subscription.expiryMillis {
                            item.field("expiryTime", time(expiry, index, subscription.charge ?? 0))
                        }
                        item.object("autoRenewingPlan") { $0.field("autoRenewEnabled", subscription.autoRenewEnabled) }
                        item.object("offerDetails") { offer in
                            offer.field("basePlanId", basePlanId(product))
                            offer.array("offerTags") { _ in }
                        }
                        if let charge = subscription.charge {
                            item.field("latestSuccessfulOrderId", scenario.orderId(plan: index, charge: charge))
                        }
                    }
                }
                if wrongTypes {
                    object.key("lineItems")
                    writeItem(&object)
                } else {
                    object.array("lineItems") { writeItem(&$0) }
                }
            }
        }
    }

    /// RFC 3339 with 0, 3, 6 or 9 fractional digits, chosen per plan and charge.
    private func time(_ millis: Int64, _ index: Int, _ charge: Int) -> String {
        let bits = SplitMix64.mix(state.scenario.idSalt, UInt64(index), UInt64(charge), 11)
        var digits = [0, 3, 6, 9][Int(bits % 4)]
        if digits == 0, millis % 1000 != 0 { digits = 3 }
        return TimeFormat.rfc3339(millis: millis, fractionDigits: digits, extra: Int((bits >> 8) % 500))
    }

    private func basePlanId(_ product: SimulatedProduct) -> String {
        switch product.periodDays {
        case 7: "p1w"
        case 365: "p1y"
        default: "p1m"
        }
    }

    private func writeContexts(_ subscription: GoogleSubscriptionState, _ object: inout JSONWriter) {
        if let resume = subscription.autoResumeMillis {
            object.object("pausedStateContext") { $0.field("autoResumeTime", TimeFormat.rfc3339(millis: resume)) }
        }
        guard let cancellation = subscription.cancellation,
            ["CANCELED", "EXPIRED", "PENDING_PURCHASE_CANCELED"].contains(subscription.state)
        else { return }
        object.object("canceledStateContext") { context in
            switch cancellation {
            case .user(let cancelMillis):
                context.object("userInitiatedCancellation") { user in
                    user.field("cancelTime", TimeFormat.rfc3339(millis: cancelMillis))
                }
            case .system:
                context.object("systemInitiatedCancellation") { _ in }
            case .replacement:
                context.object("replacementCancellation") { _ in }
            case .developer:
                context.object("developerInitiatedCancellation") { _ in }
            }
        }
    }
}
