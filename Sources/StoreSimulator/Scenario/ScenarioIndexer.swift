/// Sorts a scenario's refunds into the orders the endpoints page through, and builds Apple's notification
/// history from the plans.
struct ScenarioIndexer {
    let spec: ScenarioSpec
    let plans: [PurchasePlan]
    let refunds: [RefundRecord]

    /// Notifications older than this many days before the anchor are not kept: Apple serves 180 days.
    static let notificationDays: Int64 = 200

    func build() -> Scenario {
        let byPlan = (0..<refunds.count).map(Int32.init).sorted { lhs, rhs in
            let left = refunds[Int(lhs)]
            let right = refunds[Int(rhs)]
            return (left.plan, left.eventMillis, lhs) < (right.plan, right.eventMillis, rhs)
        }
        var voided = [[Int32]](repeating: [], count: spec.apps.count)
        for (index, refund) in refunds.enumerated() {
            let app = Int(plans[Int(refund.plan)].app)
            if spec.apps[app].platform == .google { voided[app].append(Int32(index)) }
        }
        for app in voided.indices {
            voided[app].sort { lhs, rhs in
                (refunds[Int(lhs)].recordedMillis, lhs) < (refunds[Int(rhs)].recordedMillis, rhs)
            }
        }
        var notifications = [[NotificationEvent]](repeating: [], count: spec.apps.count * 2)
        let floor = spec.anchorMillis - Self.notificationDays * 86_400_000
        let periodMillis = spec.products.map(\.periodMillis)
        var refundCursor = 0
        for (index, plan) in plans.enumerated() where spec.apps[Int(plan.app)].platform == .apple {
            while refundCursor < byPlan.count, refunds[Int(byPlan[refundCursor])].plan < Int32(index) {
                refundCursor += 1
            }
            var planRefunds: [RefundRecord] = []
            var cursor = refundCursor
            while cursor < byPlan.count, refunds[Int(byPlan[cursor])].plan == Int32(index) {
                planRefunds.append(refunds[Int(byPlan[cursor])])
                cursor += 1
            }
            let slot = Scenario.notificationSlot(app: Int(plan.app), sandbox: plan.flags.contains(.sandbox))
            let periods = (periodMillis[Int(plan.product)], periodMillis[Int(plan.secondProduct)])
            appendNotifications(
                plan: plan, index: index, periods: periods, refunds: planRefunds, floor: floor,
                into: &notifications[slot])
        }
        appendConsumptionRequests(into: &notifications)
        for slot in notifications.indices {
            notifications[slot].sort { ($0.millis, $0.plan, $0.kind.rawValue) < ($1.millis, $1.plan, $1.kind.rawValue) }
        }
        return Scenario(
            spec: spec, plans: plans, refunds: refunds, refundsByPlan: byPlan, voidedOrder: voided,
            notifications: notifications)
    }

    /// `spec.consumptionRequests` refund requests on production Apple purchases picked by the seed, shared evenly
    /// among the Apple apps (the first ones take one more when it does not divide), in the 12 hours before the
    /// anchor (every tenth of an app's 13 hours before it), each about the charge current at that time.
    private func appendConsumptionRequests(into notifications: inout [[NotificationEvent]]) {
        guard spec.consumptionRequests > 0 else { return }
        let appleApps = spec.apps.indices.filter { spec.apps[$0].platform == .apple }
        var share = [Int](repeating: 0, count: spec.apps.count)
        for (position, app) in appleApps.enumerated() {
            share[app] =
                spec.consumptionRequests / appleApps.count
                + (position < spec.consumptionRequests % appleApps.count ? 1 : 0)
        }
        let salt = SplitMix64.mix(spec.seed, 0xC0_5E)
        let candidates = plans.indices.filter { index in
            spec.apps[Int(plans[index].app)].platform == .apple && !plans[index].flags.contains(.sandbox)
        }.sorted { SplitMix64.mix(salt, UInt64($0)) < SplitMix64.mix(salt, UInt64($1)) }
        let periodMillis = spec.products.map(\.periodMillis)
        var made = [Int](repeating: 0, count: spec.apps.count)
        for index in candidates {
            let plan = plans[index]
            let app = Int(plan.app)
            guard made[app] < share[app] else { continue }
            let hoursBefore: Int64 = made[app] % 10 == 9 ? 13 : Int64(made[app] % 11) + 1
            let millis = spec.anchorMillis - hoursBefore * 3_600_000 + Int64(made[app])
            let periods = (periodMillis[Int(plan.product)], periodMillis[Int(plan.secondProduct)])
            let charges =
                plan.isOneTime
                ? (plan.startMillis <= millis ? 1 : 0) : plan.visibleCharges(at: millis, periods: periods)
            guard charges > 0 else { continue }
            let slot = Scenario.notificationSlot(app: app, sandbox: false)
            notifications[slot].append(
                NotificationEvent(
                    millis: millis, plan: Int32(index), charge: UInt16(charges - 1), kind: .consumptionRequest,
                    subtype: .none))
            made[app] += 1
        }
    }

    private func appendNotifications(
        plan: PurchasePlan, index: Int, periods: (Int64, Int64), refunds: [RefundRecord], floor: Int64,
        into list: inout [NotificationEvent]
    ) {
        func add(_ millis: Int64, _ charge: Int, _ kind: NotificationEvent.Kind, _ subtype: NotificationEvent.Subtype) {
            guard millis >= floor else { return }
            list.append(
                NotificationEvent(
                    millis: millis, plan: Int32(index), charge: UInt16(charge), kind: kind, subtype: subtype))
        }
        for refund in refunds {
            add(refund.eventMillis, Int(refund.charge), refund.kind == .familyRevoke ? .revoke : .refund, .none)
            if refund.reversedMillis != .max { add(refund.reversedMillis, Int(refund.charge), .refundReversed, .none) }
        }
        if plan.isOneTime {
            add(plan.startMillis, 0, .oneTimeCharge, .none)
            return
        }
        let count = plan.chargeCount
        let first = Int(plan.firstCount)
        // Skip charges before the floor cheaply: only the first segment can reach far back.
        var start = 0
        if periods.0 > 0, plan.startMillis < floor {
            start = min(first, Int((floor - plan.startMillis) / periods.0))
        }
        for charge in start..<count {
            let at = plan.chargeMillis(charge, periods: periods)
            if charge == 0 {
                add(at, 0, .subscribed, .initialBuy)
            } else if charge == first {
                switch plan.transition {
                case .upgrade: add(at, charge, .didChangeRenewalPref, .upgrade)
                case .downgrade:
                    add(plan.downgradeDecisionMillis(periods: periods), charge - 1, .didChangeRenewalPref, .downgrade)
                    add(at, charge, .didRenew, .none)
                case .recovery:
                    let lapse = plan.expiresMillis(first - 1, periods: periods)
                    add(lapse, first - 1, .didFailToRenew, plan.graceDays > 0 ? .gracePeriod : .none)
                    let graceEnd = lapse + Int64(plan.graceDays) * 86_400_000
                    if plan.graceDays > 0, graceEnd < at { add(graceEnd, first - 1, .gracePeriodExpired, .none) }
                    add(at, charge, .didRenew, .billingRecovery)
                case .none, .resume: add(at, charge, .didRenew, .none)
                }
            } else {
                add(at, charge, .didRenew, .none)
            }
        }
        appendEnding(of: plan, periods: periods, add)
    }

    /// The notifications of how a subscription ends: auto-renew turned off, then expiry or billing failure.
    private func appendEnding(
        of plan: PurchasePlan, periods: (Int64, Int64),
        _ add: (Int64, Int, NotificationEvent.Kind, NotificationEvent.Subtype) -> Void
    ) {
        if plan.cancelMillis != 0 {
            let charge = max(0, plan.visibleCharges(at: plan.cancelMillis, periods: periods) - 1)
            add(plan.cancelMillis, charge, .didChangeRenewalStatus, .autoRenewDisabled)
        }
        let last = plan.chargeCount - 1
        let lapse = plan.finalExpiryMillis(periods: periods)
        switch plan.ending {
        case .voluntary:
            add(lapse, last, .expired, .voluntary)
        case .billingExpired:
            add(lapse, last, .didFailToRenew, plan.graceDays > 0 ? .gracePeriod : .none)
            let graceEnd = lapse + Int64(plan.graceDays) * 86_400_000
            if plan.graceDays > 0 { add(graceEnd, last, .gracePeriodExpired, .none) }
            add(graceEnd + Int64(plan.holdDays) * 86_400_000, last, .expired, .billingRetry)
        case .renewing, .replaced, .pendingCanceled, .revoked, .oneTime:
            break
        }
    }
}
