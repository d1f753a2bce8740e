/// Charge arithmetic: when each charge happens, on which product, and until when it pays.
extension PurchasePlan {
    /// The time of charge `k` (ms).
    func chargeMillis(_ charge: Int, periods: (Int64, Int64)) -> Int64 {
        let first = Int(firstCount)
        if charge < first { return startMillis + Int64(charge) * periods.0 }
        return switchMillis + Int64(charge - first) * periods.1
    }

    /// The product index of charge `k`.
    func chargeProduct(_ charge: Int) -> UInt16 {
        charge < Int(firstCount) ? product : secondProduct
    }

    /// The end of the period charge `k` paid for (ms); one-time purchases never expire.
    func expiresMillis(_ charge: Int, periods: (Int64, Int64)) -> Int64 {
        if isOneTime { return .max }
        return chargeMillis(charge, periods: periods) + (charge < Int(firstCount) ? periods.0 : periods.1)
    }

    /// How many charges have happened by `millis`.
    func visibleCharges(at millis: Int64, periods: (Int64, Int64)) -> Int {
        if millis < startMillis || chargeCount == 0 { return 0 }
        let first = Int(firstCount)
        var count = min(first, Int((millis - startMillis) / max(periods.0, 1)) + 1)
        if isOneTime { return 1 }
        if secondCount > 0, millis >= switchMillis {
            count = first + min(Int(secondCount), Int((millis - switchMillis) / max(periods.1, 1)) + 1)
        }
        return count
    }

    /// The charge that is current at `millis` (the latest that has happened), or nil before the first.
    func currentCharge(at millis: Int64, periods: (Int64, Int64)) -> Int? {
        let visible = visibleCharges(at: millis, periods: periods)
        return visible == 0 ? nil : visible - 1
    }

    /// The end of the paid time after the last charge (ms).
    func finalExpiryMillis(periods: (Int64, Int64)) -> Int64 {
        chargeCount == 0 ? startMillis : expiresMillis(chargeCount - 1, periods: periods)
    }

    /// Whether the purchase exists yet at `millis` (a pending Google purchase exists before its first charge).
    func exists(at millis: Int64) -> Bool {
        millis >= startMillis
    }

    /// Apple: when a scheduled downgrade becomes visible in the renewal info (mid-way through the last period
    /// before it).
    func downgradeDecisionMillis(periods: (Int64, Int64)) -> Int64 {
        switchMillis - periods.0 / 2
    }
}
