import Foundation
import Reconciler
import Testing

@Suite("Transition classification rules")
struct TransitionClassifierTests {
    static let day: TimeInterval = 86_400
    static let t0 = Date(timeIntervalSince1970: 1_795_000_000)
    let classifier = TransitionClassifier(tiers: ["basic": 1, "premium": 2, "premium.yearly": 2, "pro": 3])

    func stored(
        _ state: LifecycleState, product: String = "premium", expires: Date = t0, autoRenew: Bool? = true,
        next: String? = "premium", order: String? = "o1", storeState: String? = nil, entitled: Bool? = nil
    ) -> StoredSubscription {
        StoredSubscription(
            id: 1, storeId: "s", productId: product, state: state, storeState: storeState ?? state.rawValue,
            entitled: entitled ?? [.active, .canceled, .grace].contains(state), expiresAt: expires,
            autoRenew: autoRenew, autoRenewProductId: next, orderId: order)
    }

    func seen(
        _ state: LifecycleState, product: String = "premium", expires: Date = t0, autoRenew: Bool? = true,
        next: String? = "premium", order: String? = "o1", storeState: String? = nil, entitled: Bool? = nil
    ) -> StatusObservation {
        StatusObservation(
            state: state, storeState: storeState ?? state.rawValue,
            entitled: entitled ?? [.active, .canceled, .grace].contains(state), expiresAt: expires,
            autoRenew: autoRenew, autoRenewProductId: next, productId: product, orderId: order)
    }

    @Test func nothingChangedRecordsNothing() {
        #expect(classifier.classify(stored(.active), seen(.active)) == nil)
        // Google's nanoseconds against the database's microseconds are the same instant.
        #expect(classifier.classify(stored(.active), seen(.active, expires: Self.t0.addingTimeInterval(0.0004))) == nil)
    }

    @Test func renewalNeedsANewOrderAndAMovedExpiry() {
        let later = Self.t0.addingTimeInterval(30 * Self.day)
        #expect(classifier.classify(stored(.active), seen(.active, expires: later, order: "o2")) == .renewal)
        #expect(classifier.classify(stored(.active), seen(.active, expires: later, order: "o1")) == .changed)
    }

    @Test func stateChanges() {
        let later = Self.t0.addingTimeInterval(16 * Self.day)
        #expect(classifier.classify(stored(.active), seen(.grace, expires: later)) == .grace)
        #expect(classifier.classify(stored(.grace), seen(.billingRetry, entitled: false)) == .billingRetry)
        #expect(classifier.classify(stored(.active), seen(.onHold)) == .onHold)
        #expect(classifier.classify(stored(.active), seen(.paused)) == .paused)
        #expect(classifier.classify(stored(.paused), seen(.active, expires: later, order: "o2")) == .resumed)
        for trouble in [LifecycleState.grace, .billingRetry, .onHold] {
            #expect(classifier.classify(stored(trouble), seen(.active, expires: later, order: "o2")) == .recovered)
        }
        for trouble in [LifecycleState.grace, .onHold] {
            let paidThenCanceled = seen(.canceled, expires: later, autoRenew: false, order: "o2")
            #expect(classifier.classify(stored(trouble), paidThenCanceled) == .recovered)
            // No charge went through: auto-renew turned off while the charge was failing.
            #expect(classifier.classify(stored(trouble), seen(.canceled, autoRenew: false)) == .canceled)
        }
        let paid = seen(.active, expires: later, order: "o2")
        #expect(classifier.classify(stored(.pending, entitled: false), paid) == .changed, "a first charge, no renewal")
        #expect(classifier.classify(stored(.billingRetry), seen(.expired, autoRenew: false)) == .expired)
        #expect(classifier.classify(stored(.onHold), seen(.expired, autoRenew: false)) == .expired)
        #expect(classifier.classify(stored(.active), seen(.revoked)) == .revoked)
        #expect(classifier.classify(stored(.active), seen(.replaced)) == .replaced)
    }

    @Test func lapseIsAnExpiryWithAutoRenewOff() {
        #expect(classifier.classify(stored(.active, autoRenew: false), seen(.expired, autoRenew: false)) == .lapse)
        #expect(classifier.classify(stored(.canceled, autoRenew: false), seen(.expired, autoRenew: false)) == .lapse)
        #expect(classifier.classify(stored(.active), seen(.expired, autoRenew: true)) == .expired)
    }

    @Test func turningAutoRenewOffIsACancellation() {
        #expect(classifier.classify(stored(.active), seen(.canceled, autoRenew: false)) == .canceled)
        #expect(classifier.classify(stored(.active), seen(.active, autoRenew: false)) == .canceled)
        #expect(classifier.classify(stored(.active, autoRenew: false), seen(.active, autoRenew: true)) == .changed)
    }

    @Test func productChangesByTier() {
        let later = Self.t0.addingTimeInterval(30 * Self.day)
        #expect(
            classifier.classify(stored(.active), seen(.active, product: "pro", next: "pro", order: "o2")) == .upgrade)
        #expect(
            classifier.classify(
                stored(.active), seen(.active, product: "basic", expires: later, next: "basic", order: "o2"))
                == .downgrade)
        // Same tier: a crossgrade is just a change.
        #expect(
            classifier.classify(stored(.active), seen(.active, product: "premium.yearly", next: "premium.yearly"))
                == .changed)
    }

    @Test func aLowerNextProductIsAScheduledDowngrade() {
        #expect(classifier.classify(stored(.active), seen(.active, next: "basic")) == .downgradeScheduled)
        #expect(classifier.classify(stored(.active), seen(.active, next: "pro")) == .changed)
        // Already known: nothing new.
        #expect(classifier.classify(stored(.active, next: "basic"), seen(.active, next: "basic")) == nil)
    }

    @Test func theFirstAnswerIsFirstSeenUnlessItReplacedAnotherTier() {
        let unknown = stored(.unknown, autoRenew: nil, next: nil, order: nil, storeState: nil)
        #expect(classifier.classify(unknown, seen(.active)) == .firstSeen)
        #expect(classifier.classify(unknown, seen(.active), replacedProductId: "basic") == .upgrade)
        #expect(classifier.classify(unknown, seen(.active), replacedProductId: "pro") == .downgrade)
        #expect(classifier.classify(unknown, seen(.active), replacedProductId: "premium") == .firstSeen)
    }

    @Test func settlingKeepsRevokedAndReplacedRows() {
        let revoked = TransitionClassifier.settle(stored(.revoked, entitled: false), seen(.expired))
        #expect(revoked.state == .revoked && !revoked.entitled)
        var replacedRow = stored(.replaced, entitled: false)
        replacedRow.replacedByStoreId = "new"
        let replaced = TransitionClassifier.settle(replacedRow, seen(.canceled))
        #expect(replaced.state == .replaced && !replaced.entitled)
        #expect(TransitionClassifier.settle(stored(.active), seen(.expired)).state == .expired)
        // An ended subscription whose current order the ledger holds as refunded is revoked, whichever came first.
        let refunded = TransitionClassifier.settle(stored(.unknown), seen(.expired), currentOrderRefunded: true)
        #expect(refunded.state == .revoked && !refunded.entitled)
        #expect(
            TransitionClassifier.settle(stored(.unknown), seen(.active), currentOrderRefunded: true).state == .active)
    }
}
