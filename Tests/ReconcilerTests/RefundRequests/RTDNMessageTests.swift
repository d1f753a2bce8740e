import Foundation
import Ledger
import Testing

@testable import Reconciler

/// Reading RTDN messages: what a voided-purchase and a subscription notification say, as Google sends them.
@Suite("RTDNMessage")
struct RTDNMessageTests {
    func message(_ json: String) -> RTDNMessage {
        RTDNMessage(
            messageId: "m-1", data: Data(json.utf8).base64EncodedString(), publishTime: "2026-11-28T10:00:00Z",
            packageName: "com.example")
    }

    @Test func aVoidedPurchaseNotificationIsRead() {
        let read = message(
            #"{"version":"1.0","packageName":"com.example","eventTimeMillis":"1795000000123","#
                + #""voidedPurchaseNotification":{"purchaseToken":"tok-1","orderId":"GPA.1-2-3","productType":2,"#
                + #""refundType":1}}"#)
        #expect(read.kind == .voidedPurchase)
        #expect(
            read.voided
                == RefundRecord.VoidedNotice(
                    purchaseToken: "tok-1", orderId: "GPA.1-2-3", productType: 2, refundType: 1,
                    eventMillis: 1_795_000_000_123))
        #expect(read.request == nil && read.subscriptionChange == nil)
    }

    /// Pub/Sub writes `publishTime` with fractional seconds; a refund review without `eventTimeMillis` counts its
    /// deadline from it.
    @Test func aPublishTimeWithFractionalSecondsIsRead() {
        let read = RTDNMessage(
            messageId: "m-2", data: Data(#"{"version":"1.0","packageName":"com.example"}"#.utf8).base64EncodedString(),
            publishTime: "2026-11-28T10:00:00.749Z", packageName: "com.example")
        let seconds = read.publishTime?.timeIntervalSince1970 ?? 0
        #expect(abs(seconds - 1_795_860_000.749) < 0.000_01)
    }

    @Test func aSubscriptionNotificationNamesTheSubscriptionToRecheck() {
        let read = message(
            #"{"version":"1.0","packageName":"com.example","eventTimeMillis":"1795000000123","#
                + #""subscriptionNotification":{"version":"1.0","notificationType":"3","purchaseToken":"tok-2","#
                + #""subscriptionId":"premium.monthly"}}"#)
        #expect(read.kind == .subscription)
        #expect(
            read.subscriptionChange
                == SubscriptionNotice(purchaseToken: "tok-2", notificationType: 3, subscriptionId: "premium.monthly"))
        #expect(read.voided == nil)
    }

    @Test func aNotificationOfAnotherPackageOrWithoutTokenAsksNothing() {
        let other = message(
            #"{"packageName":"com.other","voidedPurchaseNotification":{"orderId":"GPA.1","refundType":1}}"#)
        #expect(other.kind == .unknown && other.voided == nil)
        #expect(other.unknownBecause == #"it is for package "com.other", not "com.example""#)
        #expect(message(#"{"packageName":"com.example","newNotification":{}}"#).unknownBecause != nil)
        let tokenless = message(
            #"{"packageName":"com.example","subscriptionNotification":{"notificationType":4,"purchaseToken":""}}"#)
        #expect(tokenless.kind == .subscription && tokenless.subscriptionChange == nil)
    }

    /// A pending review that cannot be answered (no token, or an order id PostgreSQL cannot hold) asks nothing and
    /// says why, so the run warns and counts it rather than dropping it silently or failing the whole pull.
    @Test func aReviewWithoutAStorableOrderOrTokenIsSaid() {
        let answerable = message(
            #"{"packageName":"com.example","pendingRefundReviewNotification":{"orderId":"GPA.1","#
                + #""pendingRefundToken":"t-1","refundReason":"x\u0000y"}}"#)
        #expect(answerable.request?.pendingToken == "t-1" && answerable.request?.reason == nil)
        #expect(answerable.unknownBecause == nil)
        for body in [
            #"{"orderId":"GPA.1"}"#, #"{"orderId":"GPA.1","pendingRefundToken":""}"#,
            #"{"orderId":"GPA.\u00001","pendingRefundToken":"t-1"}"#,
            #"{"orderId":""# + String(repeating: "9", count: 8000) + #"","pendingRefundToken":"t-1"}"#,
        ] {
            let read = message(#"{"packageName":"com.example","pendingRefundReviewNotification":"# + body + "}")
            #expect(read.kind == .pendingRefundReview && read.request == nil)
            #expect(read.unknownBecause?.contains("cannot be answered") == true, "\(body)")
        }
        let voided = message(
            #"{"packageName":"com.example","voidedPurchaseNotification":{"orderId":"GPA.\u00002","#
                + #""purchaseToken":"tok","refundType":1}}"#)
        #expect(voided.voided?.orderId == nil && voided.voided?.purchaseToken == "tok")
    }
}
