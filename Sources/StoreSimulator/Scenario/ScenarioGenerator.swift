/// Builds a ``Scenario`` from a ``ScenarioSpec``: the same spec always gives the same scenario. Each purchase
/// draws from its own generator seeded by (seed, index), refunds from another, so the work is linear in size
/// and a million subscriptions take a few seconds.
struct ScenarioGenerator {
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    /// Apple transaction ids leave room for 1000 charges per purchase.
    static let maxCharges = 999

    let spec: ScenarioSpec
    let horizonMillis: Int64
    let subscriptionProducts: [Int]
    let oneTimeProducts: [Int]

    /// Prepares a generator.
    /// - Throws: ``SimulatorError`` when the spec has no apps or no subscription product.
    init(spec: ScenarioSpec) throws {
        guard !spec.apps.isEmpty else { throw SimulatorError(.scenario, "a scenario needs at least one app") }
        guard spec.apps.count < 128 else { throw SimulatorError(.scenario, "at most 127 apps") }
        self.spec = spec
        horizonMillis = spec.anchorMillis + Int64(spec.futureDays) * Self.day
        subscriptionProducts = spec.products.indices.filter {
            spec.products[$0].kind == .subscription && spec.products[$0].periodDays > 0
        }
        oneTimeProducts = spec.products.indices.filter { spec.products[$0].kind != .subscription }
        guard !subscriptionProducts.isEmpty else {
            throw SimulatorError(.scenario, "a scenario needs a subscription product with periodDays > 0")
        }
    }

    /// Generates the whole scenario.
    func generate() -> Scenario {
        var plans = generatePlans()
        let refunds = generateRefunds(&plans)
        return ScenarioIndexer(spec: spec, plans: plans, refunds: refunds).build()
    }

    private struct Successor {
        var from: Int32
        var start: Int64
        var product: UInt16
    }

    private func generatePlans() -> [PurchasePlan] {
        let total = spec.subscriptions + (oneTimeProducts.isEmpty ? 0 : spec.oneTimePurchases)
        var plans: [PurchasePlan] = []
        plans.reserveCapacity(total)
        var successors: [Int: Successor] = [:]
        for index in 0..<spec.subscriptions {
            var random = SplitMix64(seed: SplitMix64.mix(spec.seed, 1, UInt64(index)))
            let successor = successors.removeValue(forKey: index)
            plans.append(subscriptionPlan(index: index, random: &random, successor: successor, successors: &successors))
        }
        if !oneTimeProducts.isEmpty {
            for index in spec.subscriptions..<total {
                var random = SplitMix64(seed: SplitMix64.mix(spec.seed, 3, UInt64(index)))
                plans.append(oneTimePlan(index: index, random: &random))
            }
        }
        return plans
    }

    private func randomStart(_ random: inout SplitMix64, historyDays: Int? = nil) -> Int64 {
        let earliest = spec.anchorMillis - Int64(historyDays ?? spec.historyDays) * Self.day
        return random.int(in: earliest...horizonMillis)
    }

    /// Charges from `start` every `period` until past `end` (at least one, at most the id scheme's limit).
    private func chargesCovering(from start: Int64, period: Int64, until end: Int64) -> Int {
        guard end > start else { return 1 }
        return min(Self.maxCharges / 2, Int((end - start) / period) + 1)
    }

    private func otherTier(than product: Int, higher: Bool, random: inout SplitMix64) -> Int? {
        let tier = spec.products[product].tier
        let candidates = subscriptionProducts.filter {
            higher ? spec.products[$0].tier > tier : spec.products[$0].tier < tier
        }
        return candidates.isEmpty ? nil : candidates[random.index(candidates.count)]
    }

    private func subscriptionPlan(
        index: Int, random: inout SplitMix64, successor: Successor?, successors: inout [Int: Successor]
    ) -> PurchasePlan {
        let appIndex = index % spec.apps.count
        let apple = spec.apps[appIndex].platform == .apple
        let productIndex =
            successor.map { Int($0.product) } ?? subscriptionProducts[random.index(subscriptionProducts.count)]
        let period = spec.products[productIndex].periodMillis
        let start = successor?.start ?? randomStart(&random)
        var plan = PurchasePlan(
            startMillis: start, product: UInt16(productIndex), secondProduct: UInt16(productIndex), app: UInt8(appIndex)
        )
        plan.linkedFrom = successor?.from ?? -1
        drawFlags(&plan, apple: apple, random: &random)
        let renewingCount = chargesCovering(from: start, period: period, until: horizonMillis)
        // A lifetime for purchases that end: a few periods, not past what renewing would reach.
        let lifetime = min(renewingCount, 1 + Int(random.below(12)))
        let path = random.unit()
        let graceChoices: [UInt8] = apple ? (period <= 7 * Self.day ? [0, 6] : [0, 16]) : [0, 3, 7, 14, 30]
        let grace = graceChoices[random.index(graceChoices.count)]
        let hold = UInt8(1 + random.below(apple ? 60 : 30))
        switch path {
        case ..<0.38 where successor == nil, ..<0.5 where successor != nil:
            plan.firstCount = UInt16(renewingCount)
            plan.ending = .renewing
        case ..<0.63:
            plan.firstCount = UInt16(lifetime)
            plan.ending = .voluntary
            let last = start + Int64(lifetime - 1) * period
            plan.cancelMillis = last + random.int(in: Self.hour...max(Self.hour, period - Self.hour))
        case ..<0.75:
            plan.firstCount = UInt16(lifetime)
            plan.ending = .billingExpired
            plan.graceDays = grace
            plan.holdDays = hold
        case ..<0.85 where successor == nil:
            plan.firstCount = UInt16(lifetime)
            plan.transition = .recovery
            plan.graceDays = grace
            plan.holdDays = hold
            let lapse = start + Int64(lifetime) * period
            let gap = Int64(grace) * Self.day + Int64(hold) * Self.day
            plan.switchMillis = lapse + random.int(in: Self.hour...max(Self.hour, gap - Self.hour))
            plan.secondCount = chargesToHorizon(from: plan.switchMillis, period: period)
        case ..<0.92 where successor == nil && apple:
            changeTier(&plan, lifetime: lifetime, renewingCount: renewingCount, random: &random)
        case ..<0.92 where successor == nil && !apple:
            replaceOrPause(&plan, index: index, lifetime: lifetime, random: &random, successors: &successors)
        case ..<0.97 where successor == nil && !apple:
            plan.firstCount = 0
            plan.ending = .pendingCanceled
            plan.endMillis = random.chance(0.5) ? start + random.int(in: Self.day...(5 * Self.day)) : 0
        default:
            plan.firstCount = UInt16(renewingCount)
            plan.ending = .renewing
        }
        return plan
    }

    /// The platform's flags of a subscription: sandbox, account token and family sharing for Apple; test purchases
    /// and unacknowledged ones for Google.
    private func drawFlags(_ plan: inout PurchasePlan, apple: Bool, random: inout SplitMix64) {
        if apple {
            if random.chance(spec.sandboxShare) { plan.flags.insert(.sandbox) }
            if random.chance(0.7) { plan.flags.insert(.appAccountToken) }
            if random.chance(0.05) { plan.flags.insert(.familyShared) }
        } else {
            if random.chance(0.02) { plan.flags.insert(.testPurchase) }
            if random.chance(0.03) { plan.flags.insert(.unacknowledged) }
        }
    }

    /// How many charges of `period` from `switchAt` reach the horizon.
    private func chargesToHorizon(from switchAt: Int64, period: Int64) -> UInt16 {
        UInt16(chargesCovering(from: switchAt, period: period, until: horizonMillis))
    }

    /// An Apple subscription that changes tier after `lifetime` charges: an upgrade within its last period, a
    /// downgrade at its end; renewing throughout when there is no other tier.
    private func changeTier(_ plan: inout PurchasePlan, lifetime: Int, renewingCount: Int, random: inout SplitMix64) {
        let (start, productIndex) = (plan.startMillis, Int(plan.product))
        let period = spec.products[productIndex].periodMillis
        plan.firstCount = UInt16(lifetime)
        let upgrade = random.chance(0.5)
        guard let other = otherTier(than: productIndex, higher: upgrade, random: &random) else {
            plan.firstCount = UInt16(renewingCount)
            return
        }
        plan.secondProduct = UInt16(other)
        let secondPeriod = spec.products[other].periodMillis
        if upgrade {
            plan.transition = .upgrade
            let last = start + Int64(lifetime - 1) * period
            plan.switchMillis = last + random.int(in: Self.hour...max(Self.hour, period - Self.hour))
        } else {
            plan.transition = .downgrade
            plan.switchMillis = start + Int64(lifetime) * period
        }
        plan.secondCount = chargesToHorizon(from: plan.switchMillis, period: secondPeriod)
    }

    /// A Google subscription replaced after `lifetime` charges (an upgrade, a downgrade or a re-signup, by the next
    /// subscription of its app), or paused and resumed.
    private func replaceOrPause(
        _ plan: inout PurchasePlan, index: Int, lifetime: Int, random: inout SplitMix64,
        successors: inout [Int: Successor]
    ) {
        let (start, productIndex) = (plan.startMillis, Int(plan.product))
        let period = spec.products[productIndex].periodMillis
        let next = index + spec.apps.count
        plan.firstCount = UInt16(lifetime)
        let last = start + Int64(lifetime - 1) * period
        let end = start + Int64(lifetime) * period
        guard next < spec.subscriptions, random.chance(0.6) else {
            // Pause, then resume.
            plan.transition = .resume
            plan.holdDays = UInt8(7 + random.below(84))
            plan.switchMillis = end + Int64(plan.holdDays) * Self.day
            plan.secondCount = chargesToHorizon(from: plan.switchMillis, period: period)
            return
        }
        let kind = random.below(3)
        var product = productIndex
        var at = last + random.int(in: Self.hour...max(Self.hour, period - Self.hour))
        if kind == 0, let higher = otherTier(than: productIndex, higher: true, random: &random) {
            product = higher
        } else if kind == 1, let lower = otherTier(than: productIndex, higher: false, random: &random) {
            product = lower
            at = end
        } else {
            // Re-signup before the cancelled subscription lapsed.
            plan.cancelMillis = last + (at - last) / 2
        }
        plan.ending = .replaced
        plan.endMillis = at
        plan.replacedBy = Int32(next)
        successors[next] = Successor(from: Int32(index), start: at, product: UInt16(product))
    }

    private func oneTimePlan(index: Int, random: inout SplitMix64) -> PurchasePlan {
        let appIndex = index % spec.apps.count
        let apple = spec.apps[appIndex].platform == .apple
        let productIndex = oneTimeProducts[random.index(oneTimeProducts.count)]
        var plan = PurchasePlan(
            startMillis: randomStart(&random, historyDays: spec.oneTimeDays), product: UInt16(productIndex),
            secondProduct: UInt16(productIndex), app: UInt8(appIndex))
        plan.ending = .oneTime
        if spec.products[productIndex].kind == .consumable, !apple, random.chance(0.5) {
            plan.quantity = UInt8(2 + random.below(4))
        }
        if spec.products[productIndex].kind == .consumable, apple {
            // Apple consumables bought several at a time (Apple signs `price` as the total for the quantity). Its own
            // random stream, so the rest of the scenario stays as it was.
            var units = SplitMix64(seed: SplitMix64.mix(spec.seed, 5, UInt64(index)))
            if units.chance(0.5) { plan.quantity = UInt8(2 + units.below(3)) }
        }
        if apple {
            if random.chance(spec.sandboxShare) { plan.flags.insert(.sandbox) }
            if random.chance(0.7) { plan.flags.insert(.appAccountToken) }
        } else if random.chance(0.02) {
            plan.flags.insert(.testPurchase)
        }
        return plan
    }
}
