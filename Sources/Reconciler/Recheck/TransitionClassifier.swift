import Foundation

/// Decides whether a status answer changed a subscription and how to classify the change. Pure: no I/O.
///
/// The first rule that matches wins: first answer; revoked; replaced; a product change (upgrade or downgrade by the
/// configured tiers); a change of state (grace, billing retry, on hold, paused, resumed, recovered, lapse, expired,
/// canceled); a renewal (new transaction or order and the expiry moved); a downgrade scheduled for the next renewal;
/// anything else is `changed`.
public struct TransitionClassifier: Sendable {
    /// Product tiers by product id (`products.<id>.tier`); products without a tier compare as equal.
    public let tiers: [String: Int]

    /// Creates a classifier.
    public init(tiers: [String: Int]) { self.tiers = tiers }

    /// Two expiries are the same when they agree to the millisecond (Google sends nanoseconds, the database keeps
    /// microseconds).
    public static func sameInstant(_ lhs: Date?, _ rhs: Date?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (let lhs?, let rhs?): return abs(lhs.timeIntervalSince(rhs)) < 0.001
        default: return false
        }
    }

    /// The observation as it is to be stored: a revoked subscription stays revoked when Google later calls it
    /// expired, and a replaced token stays replaced (and stops granting) whatever its own answer says.
    /// - Parameter currentOrderRefunded: the ledger holds an unreversed refund of the order the answer calls
    ///   current. An ended subscription is then revoked, as it is when the refund arrives after the answer, so the
    ///   stored state does not depend on which job ran first.
    public static func settle(
        _ old: StoredSubscription, _ new: StatusObservation, currentOrderRefunded: Bool = false
    ) -> StatusObservation {
        var settled = new
        if old.state == .revoked || currentOrderRefunded, new.state == .expired {
            settled.state = .revoked
            settled.entitled = false
        }
        if old.state == .replaced || old.replacedByStoreId != nil {
            settled.state = .replaced
            settled.entitled = false
        }
        return settled
    }

    /// Whether the answer differs from what is stored in anything the job records.
    public func changed(_ old: StoredSubscription, _ new: StatusObservation) -> Bool {
        old.state != new.state || old.storeState != new.storeState || old.entitled != new.entitled
            || !Self.sameInstant(old.expiresAt, new.expiresAt) || old.autoRenew != new.autoRenew
            || old.autoRenewProductId != new.autoRenewProductId || (new.productId.map { $0 != old.productId } ?? false)
            || (new.orderId.map { $0 != old.orderId } ?? false)
    }

    /// The classification of the change, or nil when nothing changed.
    /// - Parameter replacedProductId: for a first answer that names a replaced token (Google `linkedPurchaseToken`),
    ///   the product of that token: the change is then an upgrade or downgrade when the tiers differ.
    public func classify(
        _ old: StoredSubscription, _ new: StatusObservation, replacedProductId: String? = nil
    ) -> TransitionKind? {
        guard changed(old, new) else { return nil }
        let newProduct = new.productId ?? old.productId
        if old.state == .unknown {
            if let replacedProductId, let step = step(from: replacedProductId, to: newProduct) { return step }
            return .firstSeen
        }
        if new.state == .revoked, old.state != .revoked { return .revoked }
        if new.state == .replaced, old.state != .replaced { return .replaced }
        if newProduct != old.productId, let step = step(from: old.productId, to: newProduct) { return step }
        if new.state != old.state, let kind = stateChange(old, new) { return kind }
        let newOrder = new.orderId.map { $0 != old.orderId } ?? false
        if newOrder && !Self.sameInstant(old.expiresAt, new.expiresAt) { return .renewal }
        if new.autoRenew == false, old.autoRenew != false, new.state == .active { return .canceled }
        if let next = new.autoRenewProductId, next != old.autoRenewProductId, next != newProduct,
            step(from: newProduct, to: next) == .downgrade
        {
            return .downgradeScheduled
        }
        return .changed
    }

    private func stateChange(_ old: StoredSubscription, _ new: StatusObservation) -> TransitionKind? {
        switch new.state {
        case .grace: return .grace
        case .billingRetry: return .billingRetry
        case .onHold: return .onHold
        case .paused: return .paused
        case .canceled:
            // Out of billing trouble into auto-renew off: a recovery only when a charge went through (the expiry
            // moved on); otherwise the customer gave up while the charge was failing.
            let paid = old.expiresAt.flatMap { before in new.expiresAt.map { $0 > before } } ?? false
            return LifecycleState.billingTrouble.contains(old.state) && paid ? .recovered : .canceled
        case .active:
            if LifecycleState.billingTrouble.contains(old.state) { return .recovered }
            if old.state == .paused { return .resumed }
            // A purchase whose payment came (Google PENDING): its first charge, no renewal.
            if old.state == .pending { return .changed }
            return nil
        case .expired:
            let voluntary = (old.state == .active || old.state == .canceled) && new.autoRenew != true
            return voluntary ? .lapse : .expired
        case .missing: return .missing
        case .unknown, .revoked, .pending, .replaced: return nil
        }
    }

    /// Upgrade or downgrade between two products by tier; nil when the tiers are equal or unknown.
    func step(from old: String, to new: String) -> TransitionKind? {
        guard old != new, let from = tiers[old], let to = tiers[new], from != to else { return nil }
        return to > from ? .upgrade : .downgrade
    }
}
