import Foundation
import Testing

@testable import PlayDeveloperAPI

@Suite struct SubscriptionPurchaseV2Tests {
    @Test func decodesActiveSubscription() throws {
        let body = try Fixtures.data("subscriptionsv2-active.json")
        let subscription = try SubscriptionPurchaseV2(json: body)
        #expect(subscription.kind == "androidpublisher#subscriptionPurchaseV2")
        #expect(subscription.regionCode == "DE")
        #expect(subscription.subscriptionState == .active)
        #expect(subscription.subscriptionState?.isKnown == true)
        #expect(subscription.startTime == RFC3339Timestamp("2026-10-01T08:00:00.123Z"))
        #expect(subscription.linkedPurchaseToken == "old-token-from-upgrade")
        #expect(subscription.acknowledgementState == .acknowledged)
        #expect(subscription.isTestPurchase)
        #expect(subscription.canceledStateContext == nil)
        #expect(subscription.rawJSON == body)

        let item = try #require(subscription.lineItems.first)
        #expect(item.productId == "premium_monthly")
        #expect(item.expiryTime == RFC3339Timestamp("2026-12-01T08:00:00.123456Z"))
        #expect(item.autoRenewingPlan?.autoRenewEnabled == true)
        #expect(item.autoRenewingPlan?.recurringPrice == .init(currencyCode: "EUR", units: 9, nanos: 990_000_000))
        #expect(item.prepaidPlan == nil)
        #expect(item.offerDetails == .init(basePlanId: "monthly", offerId: "intro", offerTags: ["winback"]))
        #expect(item.latestSuccessfulOrderId == "GPA.1111-2222-3333-44444..2")
        #expect(subscription.latestExpiryTime == item.expiryTime)
    }

    @Test func decodesCanceledSubscription() throws {
        let subscription = try SubscriptionPurchaseV2(json: Fixtures.data("subscriptionsv2-canceled.json"))
        #expect(subscription.subscriptionState == .canceled)
        #expect(!subscription.isTestPurchase)
        let context = try #require(subscription.canceledStateContext)
        #expect(context.userInitiatedCancellation?.cancelSurveyReason == "CANCEL_SURVEY_REASON_COST_RELATED")
        #expect(context.userInitiatedCancellation?.cancelTime == RFC3339Timestamp("2026-11-02T18:00:00Z"))
        #expect(!context.systemInitiated && !context.developerInitiated && !context.replaced)
        #expect(subscription.lineItems.first?.expiryTime?.nanoseconds == 1)
        #expect(subscription.lineItems.first?.autoRenewingPlan?.autoRenewEnabled == false)
    }

    @Test func keepsUnknownStatesRawAndMarkerContexts() throws {
        let json = #"""
            {"subscriptionState":"SUBSCRIPTION_STATE_SOMETHING_NEW","lineItems":[{"productId":"p","prepaidPlan":{"allowExtendAfterTime":"2026-12-01T00:00:00Z"}}],
             "canceledStateContext":{"systemInitiatedCancellation":{},"replacementCancellation":{}},
             "pausedStateContext":{"autoResumeTime":"2026-12-24T00:00:00Z"},
             "acknowledgementState":"ACKNOWLEDGEMENT_STATE_NEW"}
            """#
        let subscription = try SubscriptionPurchaseV2(json: Data(json.utf8))
        #expect(subscription.subscriptionState?.rawValue == "SUBSCRIPTION_STATE_SOMETHING_NEW")
        #expect(subscription.subscriptionState?.isKnown == false)
        #expect(subscription.acknowledgementState?.rawValue == "ACKNOWLEDGEMENT_STATE_NEW")
        #expect(subscription.canceledStateContext == .init(systemInitiated: true, replaced: true))
        #expect(subscription.pausedStateContext?.autoResumeTime == RFC3339Timestamp("2026-12-24T00:00:00Z"))
        #expect(
            subscription.lineItems.first?.prepaidPlan?.allowExtendAfterTime == RFC3339Timestamp("2026-12-01T00:00:00Z"))
        #expect(subscription.startTime == nil)
    }

    @Test(arguments: [
        (#"{"startTime":"last tuesday"}"#, "startTime"),
        (#"{"lineItems":[{"expiryTime":"2026-12-01T00:00:00.1Z"}]}"#, "lineItems[0].expiryTime"),
        (
            #"{"lineItems":[{"autoRenewingPlan":{"autoRenewEnabled":"yes"}}]}"#,
            "lineItems[0].autoRenewingPlan.autoRenewEnabled"
        ),
        (#"{"subscriptionState":3}"#, "subscriptionState"),
    ])
    func badFieldsAreNamed(json: String, field: String) throws {
        let error = try #require(throws: DecodingError.self) { try SubscriptionPurchaseV2(json: Data(json.utf8)) }
        #expect(PlayDeveloperClient.describe(error).field == field)
    }

    @Test func everyDocumentedStateIsKnown() {
        let documented = [
            "SUBSCRIPTION_STATE_UNSPECIFIED", "SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_ACTIVE",
            "SUBSCRIPTION_STATE_PAUSED", "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "SUBSCRIPTION_STATE_ON_HOLD",
            "SUBSCRIPTION_STATE_CANCELED", "SUBSCRIPTION_STATE_EXPIRED", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED",
        ]
        #expect(Set(documented.map(SubscriptionState.init(rawValue:))) == SubscriptionState.known)
    }
}
