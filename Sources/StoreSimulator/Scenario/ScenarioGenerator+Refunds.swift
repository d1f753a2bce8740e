/// Refunds, revocations and voids: each picks a purchase that has been charged, one of its charges, and a time
/// within that charge's period. A refund that revokes a subscription (and is not reversed) ends it there.
extension ScenarioGenerator {
    func generateRefunds(_ plans: inout [PurchasePlan]) -> [RefundRecord] {
        var random = SplitMix64(seed: SplitMix64.mix(spec.seed, 2))
        var refunded = [Bool](repeating: false, count: plans.count)
        var records: [RefundRecord] = []
        records.reserveCapacity(spec.refunds + spec.refunds / 4)
        guard !plans.isEmpty else { return records }
        for _ in 0..<spec.refunds {
            for _ in 0..<20 {
                let index = random.index(plans.count)
                if refunded[index] { continue }
                if let added = refund(plan: index, plans: &plans, random: &random) {
                    refunded[index] = true
                    records.append(contentsOf: added)
                    break
                }
            }
        }
        return records
    }

    private func periods(_ plan: PurchasePlan) -> (Int64, Int64) {
        (spec.products[Int(plan.product)].periodMillis, spec.products[Int(plan.secondProduct)].periodMillis)
    }

    private func refund(plan index: Int, plans: inout [PurchasePlan], random: inout SplitMix64) -> [RefundRecord]? {
        var plan = plans[index]
        guard plan.ending != .replaced, plan.ending != .pendingCanceled, plan.chargeCount > 0 else { return nil }
        let apple = spec.apps[Int(plan.app)].platform == .apple
        let periods = periods(plan)
        let visible = plan.visibleCharges(at: horizonMillis, periods: periods)
        guard visible > 0 else { return nil }
        let charge = random.chance(0.7) ? visible - 1 : random.index(visible)
        let chargeAt = plan.chargeMillis(charge, periods: periods)
        let length =
            plan.isOneTime ? 30 * Self.day : min(plan.expiresMillis(charge, periods: periods) - chargeAt, 20 * Self.day)
        let at = chargeAt + random.int(in: (10 * 60_000)...max(10 * 60_000, length - 60_000))
        guard at <= horizonMillis else { return nil }
        var record = RefundRecord(
            plan: Int32(index), charge: UInt16(charge), kind: .full, reason: 0, eventMillis: at, recordedMillis: at)
        var records: [RefundRecord] = []
        if apple {
            record = appleRefund(record, plan: plan, chargeAt: chargeAt, random: &random)
            records.append(record)
        } else {
            (record, records) = googleVoids(record, plan: plan, index: index, random: &random)
        }
        if !plan.isOneTime, record.reversedMillis == .max {
            truncate(&plan, at: charge, revokedAt: at)
            plans[index] = plan
        }
        if spec.maxRefundsPerPurchase > 1, !plan.isOneTime, charge > 0 {
            records += olderRefunds(of: plan, index: index, before: charge, template: record, random: &random)
        }
        return records
    }

    /// An Apple refund: its reason, kind (a family revoke, or one in three subscriptions prorated) and, one in ten,
    /// its reversal.
    private func appleRefund(
        _ refund: RefundRecord, plan: PurchasePlan, chargeAt: Int64, random: inout SplitMix64
    ) -> RefundRecord {
        var record = refund
        let (at, charge, planPeriods) = (record.eventMillis, Int(record.charge), periods(plan))
        record.reason = UInt8(random.below(2))
        if plan.flags.contains(.familyShared) {
            record.kind = .familyRevoke
        } else if !plan.isOneTime, random.chance(0.3) {
            record.kind = .prorated
            let expires = plan.expiresMillis(charge, periods: planPeriods)
            let share = Double(expires - at) / Double(max(1, expires - chargeAt))
            record.percentage = Int32(max(1000, min(100_000, (share * 100_000).rounded())))
        }
        if random.chance(0.1) {
            record.reversedMillis = at + random.int(in: Self.day...(10 * Self.day))
        }
        return record
    }

    /// A Google void as Google lists it: its source, reason and recording time, split into quantity-based parts for
    /// some multi-unit purchases, and (with `renewalVoidShare`) the renewal before voided with it.
    private func googleVoids(
        _ refund: RefundRecord, plan: PurchasePlan, index: Int, random: inout SplitMix64
    ) -> (RefundRecord, [RefundRecord]) {
        var record = refund
        var records: [RefundRecord] = []
        let (at, charge) = (record.eventMillis, Int(record.charge))
        record.source = UInt8(random.below(3))
        record.reason = UInt8(random.below(9))
        record.recordedMillis =
            random.chance(spec.lateVoidShare)
            ? at + random.int(in: Self.day...(10 * Self.day)) : at + random.int(in: 0...(5 * 60_000))
        if plan.isOneTime, plan.quantity > 1, random.chance(0.6) {
            var part = record
            part.kind = .partialQuantity
            part.quantity = UInt8(1 + random.below(UInt64(plan.quantity - 1)))
            records.append(part)
            if random.chance(0.5) {
                // The final part empties the purchase: a plain void row.
                var final = record
                final.eventMillis = at + random.int(in: Self.hour...(5 * Self.day))
                final.recordedMillis = final.eventMillis + random.int(in: 0...(5 * 60_000))
                records.append(final)
            }
        } else {
            records.append(record)
            if !plan.isOneTime, charge > 0, spec.renewalVoidShare > 0 {
                // Its own random stream, so scenarios without the option stay as they were.
                var extra = SplitMix64(seed: SplitMix64.mix(spec.seed, 4, UInt64(index)))
                if extra.chance(spec.renewalVoidShare) {
                    // The renewal before, voided with it (after it, so the revocation stays the one above).
                    var earlier = record
                    earlier.charge = UInt16(charge - 1)
                    earlier.eventMillis = at + extra.int(in: 0...(60 * 60_000))
                    earlier.recordedMillis = record.recordedMillis + (earlier.eventMillis - at)
                    records.append(earlier)
                }
            }
        }
        return (record, records)
    }

    /// Refunds of renewals before `charge`, each made during the period after it (so it does not revoke).
    private func olderRefunds(
        of plan: PurchasePlan, index: Int, before charge: Int, template: RefundRecord, random: inout SplitMix64
    ) -> [RefundRecord] {
        let periods = periods(plan)
        let count = min(charge, Int(random.below(UInt64(spec.maxRefundsPerPurchase))))
        var charges = Array(0..<charge)
        var records: [RefundRecord] = []
        for _ in 0..<count {
            let older = charges.remove(at: random.index(charges.count))
            let next = plan.chargeMillis(older + 1, periods: periods)
            let length = max(60_000, min(plan.expiresMillis(older + 1, periods: periods) - next, 20 * Self.day))
            var record = template
            record.charge = UInt16(older)
            record.kind = .full
            record.percentage = 0
            record.reversedMillis = .max
            record.eventMillis = next + random.int(in: 0...(length - 60_000))
            record.recordedMillis = record.eventMillis
            records.append(record)
        }
        return records
    }

    /// Ends a subscription with the refunded charge.
    private func truncate(_ plan: inout PurchasePlan, at charge: Int, revokedAt: Int64) {
        if charge < Int(plan.firstCount) {
            plan.firstCount = UInt16(charge + 1)
            plan.secondCount = 0
            plan.transition = .none
            plan.secondProduct = plan.product
        } else {
            plan.secondCount = UInt16(charge - Int(plan.firstCount) + 1)
        }
        plan.ending = .revoked
        plan.endMillis = revokedAt
        if plan.cancelMillis > revokedAt { plan.cancelMillis = 0 }
    }
}
