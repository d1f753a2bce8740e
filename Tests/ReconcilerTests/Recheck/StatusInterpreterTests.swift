import AppStoreServerAPI
import Foundation
import PlayDeveloperAPI
import Reconciler
import Testing

@Suite("Store answers read into states, without I/O")
struct StatusInterpreterTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func item(
        product: String? = "premium", expiry: String? = "2026-11-20T10:00:00.123456789Z", autoRenew: Bool? = true,
        order: String? = "GPA.1..2"
    ) -> SubscriptionPurchaseLineItem {
        SubscriptionPurchaseLineItem(
            productId: product, expiryTime: expiry.flatMap { RFC3339Timestamp($0) },
            autoRenewingPlan: autoRenew.map { .init(autoRenewEnabled: $0) }, latestSuccessfulOrderId: order)
    }

    static func google(
        _ state: String?, items: [SubscriptionPurchaseLineItem] = [item()], linked: String? = nil,
        replaced: Bool = false
    ) -> SubscriptionPurchaseV2 {
        SubscriptionPurchaseV2(
            lineItems: items, startTime: nil, subscriptionState: state.map { SubscriptionState(rawValue: $0) },
            linkedPurchaseToken: linked,
            canceledStateContext: replaced ? .init(replaced: true) : nil)
    }

    @Test(arguments: [
        ("SUBSCRIPTION_STATE_ACTIVE", LifecycleState.active, true),
        ("SUBSCRIPTION_STATE_CANCELED", .canceled, true),
        ("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", .grace, true),
        ("SUBSCRIPTION_STATE_ON_HOLD", .onHold, false),
        ("SUBSCRIPTION_STATE_PAUSED", .paused, false),
        ("SUBSCRIPTION_STATE_EXPIRED", .expired, false),
        ("SUBSCRIPTION_STATE_PENDING", .pending, false),
        ("SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED", .expired, false),
    ])
    func googleStatesAndEntitlement(raw: String, state: LifecycleState, entitled: Bool) throws {
        guard case .observed(let seen) = GoogleStatusInterpreter.read(Self.google(raw), now: Self.now) else {
            Issue.record("expected an observation")
            return
        }
        #expect(seen.state == state)
        #expect(seen.entitled == entitled)
        #expect(seen.storeState == raw)
        #expect(seen.productId == "premium")
        #expect(seen.orderId == "GPA.1..2")
        #expect(seen.expiresAt == RFC3339Timestamp("2026-11-20T10:00:00.123456789Z")?.date)
    }

    @Test func googleCanceledEntitlesOnlyUntilItsExpiry() {
        let past = Self.google("SUBSCRIPTION_STATE_CANCELED", items: [Self.item(expiry: "2026-11-01T00:00:00Z")])
        guard case .observed(let seen) = GoogleStatusInterpreter.read(past, now: Self.now) else {
            Issue.record("expected an observation")
            return
        }
        #expect(!seen.entitled)
    }

    @Test func googleReplacementAndLinkedToken() {
        let old = Self.google("SUBSCRIPTION_STATE_EXPIRED", replaced: true)
        #expect(GoogleStatusInterpreter.read(old, now: Self.now).observation?.state == .replaced)
        let new = Self.google("SUBSCRIPTION_STATE_ACTIVE", linked: "old-token")
        #expect(GoogleStatusInterpreter.read(new, now: Self.now).observation?.linkedStoreId == "old-token")
        // An upgrade waiting for its payment, or whose payment never came, has not replaced the old token.
        for state in ["SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"] {
            let unpaid = Self.google(state, items: [Self.item(expiry: nil, order: nil)], linked: "old-token")
            let seen = GoogleStatusInterpreter.read(unpaid, now: Self.now).observation
            #expect(seen != nil && seen?.linkedStoreId == nil, "\(state)")
        }
    }

    @Test func googleBadAndUnknownAnswers() {
        #expect(
            GoogleStatusInterpreter.read(Self.google("SUBSCRIPTION_STATE_FROZEN"), now: Self.now)
                == .unknownState("SUBSCRIPTION_STATE_FROZEN"))
        #expect(GoogleStatusInterpreter.read(Self.google(nil), now: Self.now).isBad)
        #expect(GoogleStatusInterpreter.read(Self.google("SUBSCRIPTION_STATE_ACTIVE", items: []), now: Self.now).isBad)
        let noExpiry = Self.google("SUBSCRIPTION_STATE_ACTIVE", items: [Self.item(expiry: nil)])
        #expect(GoogleStatusInterpreter.read(noExpiry, now: Self.now).isBad)
        let noProduct = Self.google("SUBSCRIPTION_STATE_ACTIVE", items: [Self.item(product: nil)])
        #expect(GoogleStatusInterpreter.read(noProduct, now: Self.now).isBad)
        // A pending purchase has no expiry yet: that is fine.
        let pending = Self.google("SUBSCRIPTION_STATE_PENDING", items: [Self.item(expiry: nil, order: nil)])
        #expect(GoogleStatusInterpreter.read(pending, now: Self.now).observation?.state == .pending)
    }

    static func transaction(_ fields: String) throws -> JWSTransactionDecodedPayload {
        try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data("{\(fields)}".utf8))
    }

    static func renewal(_ fields: String) throws -> JWSRenewalInfoDecodedPayload {
        try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: Data("{\(fields)}".utf8))
    }

    static let paid =
        #""transactionId":"20","originalTransactionId":"10","productId":"premium","expiresDate":1795000000000"#

    @Test(arguments: [
        (1, LifecycleState.active, true), (2, .expired, false), (3, .billingRetry, false), (4, .grace, true),
        (5, .revoked, false),
    ])
    func appleStatusesAndEntitlement(status: Int, state: LifecycleState, entitled: Bool) throws {
        let reading = AppleStatusInterpreter.read(
            status: SubscriptionStatus(rawValue: status), transaction: try Self.transaction(Self.paid),
            renewal: try Self.renewal(#""autoRenewStatus":1,"autoRenewProductId":"basic","productId":"premium""#),
            environment: "Production")
        let seen = try #require(reading.observation)
        #expect(seen.state == state)
        #expect(seen.entitled == entitled)
        #expect(seen.storeState == String(status))
        #expect(seen.orderId == "20")
        #expect(seen.autoRenew == true)
        #expect(seen.autoRenewProductId == "basic")
        #expect(seen.environment == "Production")
    }

    @Test func appleGraceRunsToTheGracePeriodsEnd() throws {
        let renewal = try Self.renewal(#""autoRenewStatus":1,"gracePeriodExpiresDate":1796000000000"#)
        let seen = try #require(
            AppleStatusInterpreter.read(
                status: .billingGracePeriod, transaction: try Self.transaction(Self.paid), renewal: renewal,
                environment: "Production"
            ).observation)
        #expect(seen.expiresAt == Date(timeIntervalSince1970: 1_796_000_000))
    }

    @Test func appleBadAndUnknownAnswers() throws {
        let paid = try Self.transaction(Self.paid)
        #expect(
            AppleStatusInterpreter.read(
                status: SubscriptionStatus(rawValue: 9), transaction: paid, renewal: nil, environment: "Production")
                == .unknownState("9"))
        #expect(
            AppleStatusInterpreter.read(status: nil, transaction: paid, renewal: nil, environment: "Production").isBad)
        let unparsable = try Self.transaction(
            #""transactionId":"20","originalTransactionId":"10","productId":"premium","expiresDate":"soon""#)
        #expect(
            AppleStatusInterpreter.read(
                status: .active, transaction: unparsable, renewal: nil, environment: "Production"
            )
            .isBad)
    }
}

extension StatusReading {
    var observation: StatusObservation? {
        if case .observed(let observation) = self { return observation }
        return nil
    }

    var isBad: Bool {
        if case .badAnswer = self { return true }
        return false
    }
}
