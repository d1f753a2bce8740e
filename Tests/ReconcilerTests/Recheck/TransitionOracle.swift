import StoreSimulator

/// What the simulator's ground truth says about a recorded transition: whether anything changed between two
/// checks, and whether a classification fits the change (the test's independent reading, from the truth rather
/// than from the stores' answers).
struct TransitionOracle {
    let tiers: [String: Int]

    func state(_ truth: SubscriptionTruth) -> String { RecheckHarness.expectedState(truth) }

    func raw(_ truth: SubscriptionTruth) -> String { truth.appleStatus.map(String.init) ?? truth.googleState ?? "" }

    func changed(_ old: SubscriptionTruth, _ new: SubscriptionTruth) -> Bool {
        raw(old) != raw(new) || old.entitled != new.entitled || old.expiresMillis != new.expiresMillis
            || old.autoRenew != new.autoRenew || old.autoRenewProductId != new.autoRenewProductId
            || old.productId != new.productId || old.latestTransaction != new.latestTransaction
    }

    func consistent(_ kind: String, _ old: SubscriptionTruth, _ new: SubscriptionTruth) -> Bool {
        let from = state(old)
        let to = state(new)
        let trouble: Set<String> = ["grace", "billing_retry", "on_hold"]
        switch kind {
        case "renewal":
            // The simulator keeps charging a revoked subscription whose refund is reversed later: a renewal with
            // the state unchanged is a renewal too.
            return old.latestTransaction != new.latestTransaction && old.expiresMillis != new.expiresMillis
                && old.productId == new.productId && (from == to || ["active", "canceled"].contains(to))
        case "lapse": return to == "expired" && !new.autoRenew && ["active", "canceled"].contains(from)
        case "grace", "billing_retry", "on_hold", "paused": return to == kind && from != kind
        case "recovered": return trouble.contains(from) && ["active", "canceled"].contains(to)
        case "resumed": return from == "paused" && to == "active"
        case "revoked": return to == "revoked"
        case "replaced": return to == "replaced"
        case "expired": return to == "expired"
        case "upgrade", "downgrade":
            guard let before = tiers[old.productId], let after = tiers[new.productId] else { return false }
            return kind == "upgrade" ? after > before : after < before
        case "downgrade_scheduled":
            guard let next = new.autoRenewProductId, let current = tiers[new.productId], let lower = tiers[next] else {
                return false
            }
            return next != old.autoRenewProductId && lower < current
        case "canceled": return old.autoRenew && !new.autoRenew
        case "changed": return changed(old, new)
        default: return false
        }
    }
}
