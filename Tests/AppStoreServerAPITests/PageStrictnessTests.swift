import Foundation
import StoreHTTP
import Testing

@testable import AppStoreServerAPI

/// A page's lists and `hasMore` are read strictly: read as empty or `false`, a malformed one would let the job store
/// the page's cursor past what the page held, and those refunds or notifications would never be asked for again. An
/// item of a list that cannot be read is left out and counted; the others are kept.
@Suite struct PageStrictnessTests {
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test(arguments: [
        #"{"signedTransactions": "a.b.c", "revision": "r2", "hasMore": false}"#,
        #"{"signedTransactions": ["a.b.c"], "revision": "r2", "hasMore": "maybe"}"#,
    ])
    func aMalformedRefundPageFails(json: String) throws {
        #expect(throws: DecodingError.self) { try Self.decode(RefundHistoryResponse.self, json) }
    }

    @Test func aNotificationListThatIsNoListFails() throws {
        let json = #"{"notificationHistory": {"signedPayload": "a.b.c"}, "paginationToken": "t", "hasMore": true}"#
        #expect(throws: DecodingError.self) { try Self.decode(NotificationHistoryResponse.self, json) }
    }

    /// An item that cannot be read is left out and counted (the job logs it); the page's other items are kept.
    @Test func anUnreadableItemIsCountedAndTheOthersKept() throws {
        let refunds = try Self.decode(
            RefundHistoryResponse.self, #"{"signedTransactions": ["a.b.c", null, 7, "d.e.f"], "hasMore": false}"#)
        #expect(refunds.signedTransactions == ["a.b.c", "d.e.f"] && refunds.unreadableItems == 2)
        let notifications = try Self.decode(
            NotificationHistoryResponse.self,
            #"{"notificationHistory": [{"signedPayload": "a.b.c"}, {"sendAttempts": []}, 7], "hasMore": true}"#)
        #expect(notifications.notificationHistory.map(\.signedPayload) == ["a.b.c"])
        #expect(notifications.unreadableItems == 2 && notifications.hasMore)
    }

    @Test func aMalformedStatusListFails() throws {
        #expect(throws: DecodingError.self) { try Self.decode(StatusResponse.self, #"{"data": "none"}"#) }
        let statuses = try Self.decode(
            StatusResponse.self, #"{"data": [{"subscriptionGroupIdentifier": "g", "lastTransactions": 3}]}"#)
        #expect(statuses.data.isEmpty && statuses.unreadableItems == 1)
    }

    @Test func absentOrNullListsAndFlagsStillReadAsEmpty() throws {
        let refunds = try Self.decode(RefundHistoryResponse.self, #"{"signedTransactions": null, "revision": "r"}"#)
        #expect(refunds.signedTransactions.isEmpty && !refunds.hasMore && refunds.revision == "r")
        let notifications = try Self.decode(NotificationHistoryResponse.self, #"{"hasMore": null}"#)
        #expect(notifications.notificationHistory.isEmpty && !notifications.hasMore)
        let statuses = try Self.decode(StatusResponse.self, #"{"environment": "Sandbox"}"#)
        #expect(statuses.data.isEmpty)
        // The lenient forms of a flag are still read.
        #expect(try Self.decode(RefundHistoryResponse.self, #"{"hasMore": "true"}"#).hasMore)
    }

    @Test func theClientNamesTheFieldThatFailedThePage() async throws {
        let body = #"{"signedTransactions": "a.b.c", "revision": "r2", "hasMore": false}"#
        let h = try AppStoreServerClientTests.harness([RecordingTransport.json(200, body)])
        let error = try #require(
            await AppStoreServerClientTests.apiError {
                _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
            })
        #expect(error.code == .invalidResponse && !error.isRetryable)
        #expect(error.message.contains("RefundHistoryResponse") && error.message.contains("signedTransactions"))
        #expect(error.app != nil, "\(error)")
    }
}
