import AppStoreServerAPI
import Foundation
import Testing

@Suite struct ModelDecodingTests {
    static func decode<T: Decodable>(_ type: T.Type, _ file: String) throws -> T {
        try JSONDecoder().decode(T.self, from: try AppleReference.data("models/\(file)"))
    }

    @Test func refundHistory() throws {
        let page = try Self.decode(RefundHistoryResponse.self, "getRefundHistoryResponse.json")
        #expect(page.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
        #expect(page.revision == "revision_output")
        #expect(page.hasMore)
    }

    @Test func subscriptionStatuses() throws {
        let response = try Self.decode(StatusResponse.self, "getAllSubscriptionStatusesResponse.json")
        #expect(response.environment == .localTesting)
        #expect(response.appAppleId == 5_454_545)
        #expect(response.data.count == 2)
        let first = try #require(response.data.first)
        #expect(first.subscriptionGroupIdentifier == "sub_group_one")
        #expect(first.lastTransactions.map(\.status) == [.active, .revoked])
        #expect(first.lastTransactions.first?.signedRenewalInfo == "signed_renewal_one")
        #expect(response.data[1].lastTransactions.first?.status == .expired)
    }

    @Test func notificationHistory() throws {
        let page = try Self.decode(NotificationHistoryResponse.self, "getNotificationHistoryResponse.json")
        #expect(page.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a")
        #expect(page.hasMore)
        #expect(page.notificationHistory.map(\.signedPayload) == ["signed_payload_one", "signed_payload_two"])
        let attempts = page.notificationHistory[0].sendAttempts
        #expect(attempts.map(\.sendAttemptResult) == [.noResponse, .success])
        #expect(attempts.first?.attemptDate == Date(timeIntervalSince1970: 1_698_148_900))
        #expect(page.notificationHistory[1].sendAttempts.first?.sendAttemptResult == .circularRedirect)
    }

    @Test func transactionHistory() throws {
        let page = try Self.decode(HistoryResponse.self, "transactionHistoryResponse.json")
        #expect(page.revision == "revision_output")
        #expect(page.hasMore)
        #expect(page.bundleId == "com.example")
        #expect(page.appAppleId == 323_232)
        #expect(page.environment == .localTesting)
        #expect(page.signedTransactions.count == 2)
    }

    @Test func unknownEnvironmentIsKeptRaw() throws {
        let page = try Self.decode(HistoryResponse.self, "transactionHistoryResponseWithMalformedEnvironment.json")
        #expect(page.environment?.rawValue == "LocalTestingxxx")
        #expect(page.environment != .localTesting)
    }

    @Test func malformedAppAppleIdDecodesLeniently() throws {
        let page = try Self.decode(HistoryResponse.self, "transactionHistoryResponseWithMalformedAppAppleId.json")
        #expect(page.appAppleId == nil)
        #expect(page.hasMore)  // sent as 1
        #expect(page.signedTransactions.count == 2)
    }

    @Test func transaction() throws {
        let transaction = try Self.decode(JWSTransactionDecodedPayload.self, "signedTransaction.json")
        #expect(transaction.transactionId == "23456")
        #expect(transaction.originalTransactionId == "12345")
        #expect(transaction.webOrderLineItemId == "34343")
        #expect(transaction.purchaseDate == Date(timeIntervalSince1970: 1_698_148_900))
        #expect(transaction.expiresDate == Date(timeIntervalSince1970: 1_698_149_000))
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.revocationReason == .appIssue)
        #expect(transaction.revocationDate == Date(timeIntervalSince1970: 1_698_148_950))
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.environment == .localTesting)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "USA")
        #expect(transaction.price == 10990)
        #expect(transaction.currency == "USD")
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.offerPeriod == "P1Y")
        #expect(transaction.revocationType == nil)
    }

    @Test func transactionWithProratedRevocation() throws {
        let transaction = try Self.decode(JWSTransactionDecodedPayload.self, "signedTransactionWithRevocation.json")
        #expect(transaction.revocationType == .refundProrated)
        #expect(transaction.revocationPercentage == 50000)
        #expect(transaction.price == 10990)
    }

    @Test func renewalInfo() throws {
        let renewal = try Self.decode(JWSRenewalInfoDecodedPayload.self, "signedRenewalInfo.json")
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.autoRenewProductId == "com.example.product.2")
        #expect(renewal.productId == "com.example.product")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.priceIncreaseStatus == .customerHasNotResponded)
        #expect(renewal.gracePeriodExpiresDate == Date(timeIntervalSince1970: 1_698_148_900))
        #expect(renewal.offerType == .promotionalOffer)
        #expect(renewal.renewalPrice == 9990)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.renewalDate == Date(timeIntervalSince1970: 1_698_148_850))
    }

    @Test func notification() throws {
        let notification = try Self.decode(ResponseBodyV2DecodedPayload.self, "signedNotification.json")
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate == Date(timeIntervalSince1970: 1_698_148_900))
        let data = try #require(notification.data)
        #expect(data.environment == .localTesting)
        #expect(data.appAppleId == 41234)
        #expect(data.bundleId == "com.example")
        #expect(data.signedTransactionInfo == "signed_transaction_info_value")
        #expect(data.signedRenewalInfo == "signed_renewal_info_value")
        #expect(data.status == .active)
    }

    @Test(arguments: [
        ("apiException.json", 5_000_000, "An unknown error occurred."),
        ("apiTooManyRequestsException.json", 4_290_000, "Rate limit exceeded."),
        ("apiUnknownError.json", 9_990_000, "Testing error."),
        ("transactionIdNotFoundError.json", 4_040_010, "Transaction id not found."),
        ("invalidTransactionIdError.json", 4_000_006, "Invalid transaction id."),
    ])
    func errorBodies(file: String, code: Int64, message: String) throws {
        let payload = try Self.decode(ErrorPayload.self, file)
        #expect(payload.errorCode == APIErrorCode(rawValue: code))
        #expect(payload.errorMessage == message)
    }

    @Test func transactionInfoResponseHoldsAString() throws {
        struct TransactionInfoResponse: Decodable { var signedTransactionInfo: String }
        let response = try Self.decode(TransactionInfoResponse.self, "transactionInfoResponse.json")
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
    }

    @Test func unknownEnumValuesAndOddTypesNeverFailDecoding() throws {
        let json = """
            {"type":"Future Product","revocationType":"REFUND_SOMEDAY","revocationReason":7,"offerType":"9",
             "inAppOwnershipType":"BORROWED","price":"12990","quantity":2.0,"isUpgraded":1,"appAccountToken":"",
             "purchaseDate":"1698148900000","environment":"Staging","storefront":42,"expiresDate":{"nested":true}}
            """
        let transaction = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))
        #expect(transaction.type?.rawValue == "Future Product")
        #expect(transaction.revocationType?.rawValue == "REFUND_SOMEDAY")
        #expect(transaction.revocationReason?.rawValue == 7)
        #expect(transaction.offerType?.rawValue == 9)
        #expect(transaction.inAppOwnershipType?.rawValue == "BORROWED")
        #expect(transaction.price == 12990)
        #expect(transaction.quantity == 2)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.appAccountToken == nil)
        #expect(transaction.purchaseDate == Date(timeIntervalSince1970: 1_698_148_900))
        #expect(transaction.environment?.rawValue == "Staging")
        #expect(transaction.storefront == "42")
        #expect(transaction.expiresDate == nil)
    }

    @Test func notificationHistoryRequestEncodesMilliseconds() throws {
        let request = NotificationHistoryRequest(
            startDate: Date(timeIntervalSince1970: 1_698_148_900),
            endDate: Date(timeIntervalSince1970: 1_698_148_950.5),
            notificationType: .refund, onlyFailures: false)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? [String: Any])
        #expect(object["startDate"] as? Int == 1_698_148_900_000)
        #expect(object["endDate"] as? Int == 1_698_148_950_500)
        #expect(object["notificationType"] as? String == "REFUND")
        #expect(object["onlyFailures"] as? Bool == false)
        #expect(object["transactionId"] == nil)
        #expect(object["notificationSubtype"] == nil)
    }
}
