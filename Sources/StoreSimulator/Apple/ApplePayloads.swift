/// Apple's signed payloads, written from Apple's documentation: `JWSTransactionDecodedPayload`,
/// `JWSRenewalInfoDecodedPayload` and `responseBodyV2DecodedPayload`, each as of one instant.
/// https://developer.apple.com/documentation/appstoreserverapi/jwstransactiondecodedpayload
struct ApplePayloads {
    /// How a fault spoils payloads.
    struct Spoilers {
        var badSignature = false
        var wrongBundleId = false

        init(_ faults: Set<FaultKind>) {
            badSignature = faults.contains(.badSignature)
            wrongBundleId = faults.contains(.wrongBundleId)
        }
    }

    let state: SimulatorState
    let spoilers: Spoilers

    private var scenario: Scenario { state.scenario }

    func environment(_ plan: PurchasePlan) -> String {
        plan.flags.contains(.sandbox) ? "Sandbox" : "Production"
    }

    func bundleId(_ plan: PurchasePlan) -> String {
        spoilers.wrongBundleId ? "com.example.wrong" : scenario.spec.apps[Int(plan.app)].storeId
    }

    /// The signed transaction of charge `charge`, as of `millis`.
    /// - Parameter refund: the refund to show regardless of `millis` (refund history lists refunds as such).
    func signedTransaction(plan index: Int, charge: Int, at millis: Int64, refund: RefundRecord? = nil) -> String {
        state.signer.sign(
            transactionJSON(plan: index, charge: charge, at: millis, refund: refund), corrupt: spoilers.badSignature)
    }

    func transactionJSON(plan index: Int, charge: Int, at millis: Int64, refund: RefundRecord?) -> String {
        let plan = scenario.plans[index]
        let periods = scenario.periods(plan)
        let product = scenario.product(plan, charge: charge)
        let shown =
            refund
            ?? scenario.refunds(ofPlan: index).lazy.map { scenario.refunds[Int($0)] }.first {
                Int($0.charge) == charge && $0.revokes && $0.eventMillis <= millis && millis < $0.reversedMillis
            }
        var json = JSONWriter(capacity: 900)
        json.object { object in
            object.field("transactionId", String(scenario.transactionId(plan: index, charge: charge)))
            object.field("originalTransactionId", String(scenario.originalTransactionId(plan: index)))
            if !plan.isOneTime {
                object.field("webOrderLineItemId", String(scenario.webOrderLineItemId(plan: index, charge: charge)))
            }
            object.field("bundleId", bundleId(plan))
            object.field("productId", product.productId)
            if !plan.isOneTime { object.field("subscriptionGroupIdentifier", product.group) }
            object.field("purchaseDate", plan.chargeMillis(charge, periods: periods))
            object.field("originalPurchaseDate", plan.startMillis)
            if !plan.isOneTime { object.field("expiresDate", plan.expiresMillis(charge, periods: periods)) }
            object.field("quantity", Int(plan.quantity))
            object.field("type", product.appleType)
            object.field("appAccountToken", ifPresent: scenario.appAccountToken(plan: index))
            object.field(
                "inAppOwnershipType", plan.flags.contains(.familyShared) ? "FAMILY_SHARED" : "PURCHASED")
            object.field("signedDate", millis)
            if let shown {
                object.field("revocationReason", Int(shown.reason))
                object.field("revocationDate", shown.eventMillis)
            }
            if plan.transition == .upgrade, charge == Int(plan.firstCount) - 1, millis >= plan.switchMillis {
                object.field("isUpgraded", true)
            }
            object.field("environment", environment(plan))
            object.field("transactionReason", charge == 0 || plan.isOneTime ? "PURCHASE" : "RENEWAL")
            object.field("storefront", product.storefront)
            object.field("storefrontId", storefrontId(product.storefront))
            object.field("price", product.priceMilli * Int64(plan.quantity))
            object.field("currency", product.currency)
            object.field("appTransactionId", scenario.appTransactionId(plan: index))
            if let shown {
                switch shown.kind {
                case .full, .partialQuantity: object.field("revocationType", "REFUND_FULL")
                case .prorated:
                    object.field("revocationType", "REFUND_PRORATED")
                    object.field("revocationPercentage", Int64(shown.percentage))
                case .familyRevoke: object.field("revocationType", "FAMILY_REVOKE")
                }
            }
        }
        return json.text
    }

    private func storefrontId(_ storefront: String) -> String {
        switch storefront {
        case "DEU": "143443"
        case "GBR": "143444"
        case "JPN": "143462"
        default: "143441"
        }
    }

    /// The signed renewal info of a subscription as of `millis`, or nil for one-time purchases.
    func signedRenewalInfo(plan index: Int, at millis: Int64) -> String? {
        guard let json = renewalJSON(plan: index, at: millis) else { return nil }
        return state.signer.sign(json, corrupt: spoilers.badSignature)
    }

    func renewalJSON(plan index: Int, at millis: Int64) -> String? {
        let plan = scenario.plans[index]
        guard !plan.isOneTime, let status = scenario.appleState(plan: index, at: millis) else { return nil }
        let current = scenario.product(plan, charge: status.charge)
        let next = scenario.spec.products[Int(status.autoRenewProduct)]
        var json = JSONWriter(capacity: 600)
        json.object { object in
            object.field("originalTransactionId", String(scenario.originalTransactionId(plan: index)))
            object.field("autoRenewProductId", next.productId)
            object.field("productId", current.productId)
            object.field("autoRenewStatus", status.autoRenewStatus)
            if let intent = status.expirationIntent { object.field("expirationIntent", intent) }
            if status.inBillingRetry || status.expirationIntent == 2 {
                object.field("isInBillingRetryPeriod", status.inBillingRetry)
            }
            object.field("gracePeriodExpiresDate", ifPresent: status.gracePeriodExpiresMillis)
            object.field("signedDate", millis)
            object.field("environment", environment(plan))
            object.field("recentSubscriptionStartDate", plan.startMillis)
            if let renewal = status.renewalMillis {
                object.field("renewalDate", renewal)
                object.field("renewalPrice", next.priceMilli)
                object.field("currency", next.currency)
            }
            object.field("appAccountToken", ifPresent: scenario.appAccountToken(plan: index))
            object.field("appTransactionId", scenario.appTransactionId(plan: index))
        }
        return json.text
    }

    /// The signed notification (`signedPayload`) of one history event: the one signed before when there is one.
    func signedNotification(_ event: NotificationEvent) -> String {
        let index = Int(event.plan)
        let charge = Int(event.charge)
        let recorded =
            event.kind == .refund || event.kind == .revoke
            ? scenario.refunds(ofPlan: index).lazy.map { scenario.refunds[Int($0)] }.first { Int($0.charge) == charge }
            : nil
        // Kept only when the scenario alone decides the payload: a spoiled one is the fault's, and the REFUND that
        // ends a refund request shows the share the answer left (`requestRefund`).
        let kept = !spoilers.badSignature && !spoilers.wrongBundleId && (event.kind != .refund || recorded != nil)
        if kept, let signed = state.signedNotifications.payload(of: event) { return signed }
        let refund =
            event.kind == .refund && recorded == nil ? requestRefund(event, plan: scenario.plans[index]) : recorded
        let signed = sign(event, refund: refund)
        if kept { state.signedNotifications.remember(signed, of: event) }
        return signed
    }

    private func sign(_ event: NotificationEvent, refund: RefundRecord?) -> String {
        let index = Int(event.plan)
        let plan = scenario.plans[index]
        let app = scenario.spec.apps[Int(plan.app)]
        let charge = Int(event.charge)
        var json = JSONWriter(capacity: 2400)
        json.object { object in
            object.field("notificationType", event.kind.name)
            object.field("subtype", ifPresent: event.subtype.name)
            object.field("notificationUUID", notificationUUID(event))
            object.object("data") { data in
                data.field("appAppleId", app.appAppleId ?? 0)
                data.field("bundleId", bundleId(plan))
                data.field("bundleVersion", "1.0")
                data.field("environment", environment(plan))
                data.field(
                    "signedTransactionInfo",
                    jws: signedTransaction(plan: index, charge: charge, at: event.millis, refund: refund))
                if let renewal = signedRenewalInfo(plan: index, at: event.millis) {
                    data.field("signedRenewalInfo", jws: renewal)
                }
                if !plan.isOneTime, let status = scenario.appleState(plan: index, at: event.millis) {
                    data.field("status", status.status)
                }
                if event.kind == .consumptionRequest {
                    let reasons = [
                        "UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
                    ]
                    data.field("consumptionRequestReason", reasons[Int(event.plan) % reasons.count])
                }
            }
            object.field("version", "2.0")
            object.field("signedDate", event.millis)
        }
        return state.signer.sign(utf8: json.utf8, corrupt: spoilers.badSignature)
    }

    /// A stable UUID for a notification.
    func notificationUUID(_ event: NotificationEvent) -> String {
        let salt = scenario.idSalt
        let high = SplitMix64.mix(salt, UInt64(event.plan), UInt64(event.charge), UInt64(event.kind.rawValue), 1)
        let low = SplitMix64.mix(salt, UInt64(bitPattern: event.millis), UInt64(event.subtype.rawValue), 2)
        return Scenario.uuid(high, low)
    }

    /// The refund that ends a refund request (``ConsumptionAnswers/outcomes(app:requests:now:seed:)``), at the
    /// notification's time: in full, or after `GRANT_PRORATED` prorated by what is left: a one-time purchase's
    /// unconsumed share (100 % less the `consumptionPercentage` sent), a subscription's unused share of its period
    /// at the answer (Apple computes it: none may be sent).
    func requestRefund(_ event: NotificationEvent, plan: PurchasePlan) -> RefundRecord {
        var refund = RefundRecord(
            plan: event.plan, charge: event.charge, kind: .full, reason: 0, eventMillis: event.millis,
            recordedMillis: event.millis)
        let app = scenario.spec.apps[Int(plan.app)].id
        guard let answer = state.consumption.answer(app: app, plan: event.plan, charge: event.charge),
            answer.preference == "GRANT_PRORATED"
        else { return refund }
        let left: Int64
        if plan.isOneTime {
            left = 100_000 - (answer.consumption ?? 0)
        } else {
            let periods = scenario.periods(plan)
            let start = plan.chargeMillis(Int(event.charge), periods: periods)
            let end = plan.expiresMillis(Int(event.charge), periods: periods)
            left = end > start ? (end - answer.millis) * 100_000 / (end - start) : 0
        }
        refund.kind = .prorated
        refund.percentage = Int32(min(100_000, max(0, left)))
        return refund
    }
}
