/// Ground truth computed from the scenario for an instant.
extension Scenario {
    func groundTruth(at now: Int64, oddRows: Double = 0) -> GroundTruth {
        var truth = GroundTruth(
            nowMillis: now, appleRefunds: appleRefundTruth(at: now),
            googleVoids: googleVoidTruth(at: now, oddRows: oddRows))
        truth.googleRefundsWithoutRevocation = googleRefundsWithoutRevocation(at: now)
        return truth
    }

    /// Apple's refunds by `now`, by revocation date and transaction.
    private func appleRefundTruth(at now: Int64) -> [GroundTruth.AppleRefund] {
        var apple: [GroundTruth.AppleRefund] = []
        for refundIndex in refundsByPlan {
            let refund = refunds[Int(refundIndex)]
            guard refund.eventMillis <= now, spec.apps[Int(plans[Int(refund.plan)].app)].platform == .apple
            else { continue }
            apple.append(appleRefund(refund, now: now))
        }
        apple.sort { ($0.revocationDate, $0.transactionId) < ($1.revocationDate, $1.transactionId) }
        return apple
    }

    /// The truth of one Apple refund at `now`.
    func appleRefund(_ refund: RefundRecord, now: Int64) -> GroundTruth.AppleRefund {
        let index = Int(refund.plan)
        let plan = plans[index]
        let charge = Int(refund.charge)
        let product = product(plan, charge: charge)
        let type =
            switch refund.kind {
            case .prorated: "REFUND_PRORATED"
            case .familyRevoke: "FAMILY_REVOKE"
            case .full, .partialQuantity: "REFUND_FULL"
            }
        return GroundTruth.AppleRefund(
            app: spec.apps[Int(plan.app)].id, environment: plan.flags.contains(.sandbox) ? "Sandbox" : "Production",
            transactionId: String(transactionId(plan: index, charge: charge)),
            originalTransactionId: String(originalTransactionId(plan: index)), productId: product.productId,
            purchaseDate: plan.chargeMillis(charge, periods: periods(plan)), revocationDate: refund.eventMillis,
            revocationReason: Int(refund.reason), revocationType: type,
            revocationPercentage: refund.kind == .prorated ? Int(refund.percentage) : nil,
            priceMilli: product.priceMilli * Int64(plan.quantity), currency: product.currency,
            quantity: Int(plan.quantity), unitPriceMilli: product.priceMilli,
            reversedDate: refund.reversedMillis <= now ? refund.reversedMillis : nil)
    }

    /// Google's voids by `now`, in each app's voided order.
    private func googleVoidTruth(at now: Int64, oddRows: Double) -> [GroundTruth.GoogleVoid] {
        var google: [GroundTruth.GoogleVoid] = []
        for (appIndex, order) in voidedOrder.enumerated() where spec.apps[appIndex].platform == .google {
            let app = spec.apps[appIndex]
            for refundIndex in order {
                let refund = refunds[Int(refundIndex)]
                guard refund.eventMillis <= now else { continue }
                google.append(
                    googleVoid(refund, app: app, now: now, odd: OddRow.kind(ofRefund: refundIndex, rate: oddRows)))
            }
        }
        return google
    }

    /// The truth of one Google void of app `app`.
    func googleVoid(_ refund: RefundRecord, app: SimulatedApp, now: Int64, odd: OddRow?) -> GroundTruth.GoogleVoid {
        let index = Int(refund.plan)
        let plan = plans[index]
        let charge = Int(refund.charge)
        let price = orderPrice(plan: index, charge: charge)
        return GroundTruth.GoogleVoid(
            app: app.id, packageName: app.storeId, orderId: orderId(plan: index, charge: charge),
            purchaseToken: purchaseToken(plan: index), productId: product(plan, charge: charge).productId,
            purchaseTimeMillis: plan.chargeMillis(charge, periods: periods(plan)),
            voidedTimeMillis: refund.eventMillis, recordedTimeMillis: refund.recordedMillis,
            recorded: refund.recordedMillis <= now, voidedSource: Int(refund.source), voidedReason: Int(refund.reason),
            voidedQuantity: refund.kind == .partialQuantity ? Int(refund.quantity) : nil,
            isSubscription: !plan.isOneTime, buyerCountry: price.country, currency: price.currency,
            unitPriceNanos: price.unitNanos, unitTaxNanos: price.unitTaxNanos, orderQuantity: price.quantity,
            processedMillis: refund.kind == .partialQuantity ? partProcessedMillis(refund) : refund.eventMillis,
            odd: odd)
    }

    /// Google's refunds made without revocation by `now`.
    private func googleRefundsWithoutRevocation(at now: Int64) -> [GroundTruth.GoogleRefundWithoutRevocation] {
        var silent: [GroundTruth.GoogleRefundWithoutRevocation] = []
        for index in 0..<min(plans.count, spec.subscriptions) {
            let plan = plans[index]
            guard !plan.isOneTime, spec.apps[Int(plan.app)].platform == .google,
                SplitMix64.mix(idSalt, UInt64(index), 11) % 10 == 0
            else { continue }
            let visible = plan.visibleCharges(at: now, periods: periods(plan))
            for charge in 0..<visible {
                guard let at = refundWithoutRevocation(plan: index, charge: charge), at <= now else { continue }
                let price = orderPrice(plan: index, charge: charge)
                silent.append(
                    GroundTruth.GoogleRefundWithoutRevocation(
                        app: spec.apps[Int(plan.app)].id, orderId: orderId(plan: index, charge: charge),
                        purchaseToken: purchaseToken(plan: index), refundMillis: at, currency: price.currency,
                        totalNanos: price.unitNanos * Int64(price.quantity),
                        taxNanos: price.unitTaxNanos * Int64(price.quantity), isLatestOrder: charge == visible - 1))
            }
        }
        return silent
    }

    /// The number of subscriptions (one-time purchases excluded).
    var subscriptionCount: Int { spec.subscriptions }

    /// The truth of subscriptions `offset..<offset+limit` (by plan index) that exist at `now`.
    func subscriptionTruth(at now: Int64, offset: Int, limit: Int) -> [SubscriptionTruth] {
        let end = min(spec.subscriptions, offset + max(0, limit))
        guard offset < end else { return [] }
        return (max(0, offset)..<end).compactMap { subscriptionTruth(plan: $0, at: now) }
    }

    /// The truth of one subscription, nil before it exists.
    func subscriptionTruth(plan index: Int, at now: Int64) -> SubscriptionTruth? {
        let plan = plans[index]
        let app = spec.apps[Int(plan.app)]
        if app.platform == .apple {
            guard let status = appleState(plan: index, at: now) else { return nil }
            let periods = periods(plan)
            return SubscriptionTruth(
                app: app.id, platform: "apple", environment: plan.flags.contains(.sandbox) ? "Sandbox" : "Production",
                storeId: String(originalTransactionId(plan: index)),
                productId: product(plan, charge: status.charge).productId, appleStatus: status.status,
                googleState: nil, entitled: status.entitled,
                expiresMillis: status.gracePeriodExpiresMillis ?? plan.expiresMillis(status.charge, periods: periods),
                autoRenew: status.autoRenewStatus == 1,
                latestTransaction: String(transactionId(plan: index, charge: status.charge)),
                autoRenewProductId: spec.products[Int(status.autoRenewProduct)].productId, linkedPurchaseToken: nil,
                replacedByToken: nil)
        }
        guard let state = googleState(plan: index, at: now) else { return nil }
        return SubscriptionTruth(
            app: app.id, platform: "google", environment: nil, storeId: purchaseToken(plan: index),
            productId: spec.products[Int(state.product)].productId, appleStatus: nil,
            googleState: "SUBSCRIPTION_STATE_" + state.state, entitled: state.entitled,
            expiresMillis: state.expiryMillis, autoRenew: state.autoRenewEnabled,
            latestTransaction: state.charge.map { orderId(plan: index, charge: $0) }, autoRenewProductId: nil,
            linkedPurchaseToken: plan.linkedFrom >= 0 ? purchaseToken(plan: Int(plan.linkedFrom)) : nil,
            replacedByToken: plan.replacedBy >= 0 && plan.endMillis <= now
                ? purchaseToken(plan: Int(plan.replacedBy)) : nil)
    }
}
