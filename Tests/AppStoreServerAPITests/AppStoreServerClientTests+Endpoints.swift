import AppStoreServerAPI
import Crypto
import Foundation
import RateLimiting
import StoreHTTP
import Testing

extension AppStoreServerClientTests {
    @Test func notificationHistoryPostsTheBodyAndPaginationToken() async throws {
        let body = try AppleReference.text("models/getNotificationHistoryResponse.json")
        let h = try Self.harness([RecordingTransport.json(200, body)])
        let request = NotificationHistoryRequest(
            startDate: Date(timeIntervalSince1970: 1_690_000_000), endDate: Self.now, notificationType: .refund)
        let (page, _) = try await h.client.notificationHistory(
            request, paginationToken: "tok en", purpose: .incremental)
        #expect(page.notificationHistory.count == 2)
        let sent = try #require(h.transport.requests.first)
        #expect(sent.method == "POST")
        #expect(sent.url.absoluteString == "https://prod.test/inApps/v1/notifications/history?paginationToken=tok%20en")
        #expect(sent.headers["Content-Type"] == "application/json")
        let sentBody = try #require(sent.body)
        let object = try #require(try JSONSerialization.jsonObject(with: sentBody) as? [String: Any])
        #expect(object["startDate"] as? Int == 1_690_000_000_000)
        #expect(object["notificationType"] as? String == "REFUND")
        #expect(h.gate.apis == [.appleNotificationHistory])
    }

    @Test func notificationHistoryNeverFallsBack() async throws {
        let notFound = RecordingTransport.json(404, #"{"errorCode":4040010}"#)
        let h = try Self.harness([notFound], fallback: true)
        let request = NotificationHistoryRequest(startDate: Self.now, endDate: Self.now)
        await #expect(throws: AppStoreServerAPIError.self) {
            _ = try await h.client.notificationHistory(request, paginationToken: nil, purpose: .incremental)
        }
        #expect(h.transport.requests.count == 1)
    }

    @Test func subscriptionStatusesURLAndDecoding() async throws {
        let body = try AppleReference.text("models/getAllSubscriptionStatusesResponse.json")
        let h = try Self.harness([RecordingTransport.json(200, body)])
        let (response, _) = try await h.client.subscriptionStatuses(
            transactionId: "42", status: [.active, .billingGracePeriod], purpose: .incremental)
        #expect(response.data.count == 2)
        #expect(
            h.transport.requests.first?.url.absoluteString
                == "https://prod.test/inApps/v1/subscriptions/42?status=1&status=4")
        #expect(h.gate.apis == [.appleSubscriptionStatuses])
    }

    @Test func transactionHistoryRepeatsFilters() async throws {
        let body = try AppleReference.text("models/transactionHistoryResponse.json")
        let h = try Self.harness([RecordingTransport.json(200, body)])
        let filter = TransactionHistoryRequest(
            startDate: Date(timeIntervalSince1970: 1_600_000_000), productIds: ["a", "b"],
            productTypes: [.autoRenewable],
            sort: .ascending, revoked: true)
        let (page, _) = try await h.client.transactionHistory(
            transactionId: "7", revision: "r1", filter: filter, purpose: .backfill)
        #expect(page.signedTransactions.count == 2)
        #expect(
            h.transport.requests.first?.url.absoluteString
                == "https://prod.test/inApps/v2/history/7?revision=r1&startDate=1600000000000&productId=a&productId=b"
                + "&productType=AUTO_RENEWABLE&sort=ASCENDING&revoked=true")
        #expect(h.gate.apis == [.appleTransactionHistory])
    }

    @Test func oversizedAnswersAreRefused() async throws {
        let big = "{\"signedTransactions\":[\"" + String(repeating: "a", count: 5 << 20) + "\"]}"
        let h = try Self.harness([RecordingTransport.json(200, big)])
        let error = try #require(
            await Self.apiError {
                _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
            })
        #expect(error.code == .invalidResponse)
    }
}
