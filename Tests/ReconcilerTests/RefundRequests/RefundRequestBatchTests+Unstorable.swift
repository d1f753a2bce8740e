import Foundation
import Ledger
import Postgres
import TestSupport
import Testing

@testable import Reconciler

extension RefundRequestBatchTests {
    /// A message with an escape `jsonb` refuses (a NUL in the obfuscated account id the app set) and one that is not
    /// JSON at all: the pull's transaction stores both with what Google sent (in base64) and the review's request is
    /// still stored, so the pull can be acknowledged; before, the whole pull rolled back on every run.
    @Test func aMessageJsonbRefusesIsKeptInBase64AndItsReviewIsStillStored() throws {
        let connection = try database()
        defer { connection.close() }
        let counters = JobCounters()
        let (environment, intake) = pull(on: connection, counters: counters)
        let json =
            #"{"packageName":"com.droid","eventTimeMillis":"1795000000000","pendingRefundReviewNotification":"#
            + #"{"orderId":"GPA.9","pendingRefundToken":"t9","obfuscatedExternalAccountId":"a\u0000b"}}"#
        let messages = [
            RTDNMessage(
                messageId: "nul", data: Data(json.utf8).base64EncodedString(), publishTime: nil,
                packageName: "com.droid"),
            RTDNMessage(messageId: "junk", data: "not base64 at all", publishTime: nil, packageName: "com.droid"),
            // Delivered twice in the pull: reported once.
            RTDNMessage(messageId: "junk", data: "not base64 at all", publishTime: nil, packageName: "com.droid"),
        ]
        _ = try connection.transaction { try intake.store(messages, in: environment, on: $0) }
        let rows = try connection.query(
            """
            SELECT message_id, kind, notification->>'not_stored_as_sent' AS why,
                   notification->>'data_base64' AS data FROM rtdn_message ORDER BY message_id
            """)
        #expect(rows.count == 2)
        let junk = try rows[0].decode("data", as: String.self)
        #expect(Data(base64Encoded: junk) == Data("not base64 at all".utf8))
        #expect(try rows[0].decode("kind", as: String.self) == "unknown")
        #expect(try rows[1].decode("kind", as: String.self) == "pending_refund_review")
        #expect(try rows[1].decode("why", as: String.self) == #"unstorable: \u0000"#)
        #expect(Data(base64Encoded: try rows[1].decode("data", as: String.self)) == Data(json.utf8))
        #expect(try Self.count(connection, "refund_request WHERE transaction_id = 'GPA.9'") == 1)
        #expect(counters["messages_unknown"] == 1)
    }

    /// A subscription notification whose token is too long for the recheck queue's key: the pull's transaction
    /// commits, the message is stored and said, and the other messages of the pull are acted on. Before, the queue's
    /// index refused the token and the whole pull rolled back on every run, reviews behind it included.
    @Test func aSubscriptionTokenTooLongForTheQueueIsSaidAndThePullStillCommits() throws {
        let connection = try database()
        defer { connection.close() }
        let counters = JobCounters()
        let (environment, intake) = pull(on: connection, counters: counters)
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let long = String((0..<3000).map { _ in alphabet[Int(generator.next() % 64)] })
        func subscription(_ id: String, _ token: String) -> RTDNMessage {
            let json =
                #"{"packageName":"com.droid","eventTimeMillis":"1795000000000","subscriptionNotification":"#
                + #"{"notificationType":2,"purchaseToken":"\#(token)","subscriptionId":"monthly"}}"#
            return RTDNMessage(
                messageId: id, data: Data(json.utf8).base64EncodedString(), publishTime: nil, packageName: "com.droid")
        }
        let review =
            #"{"packageName":"com.droid","eventTimeMillis":"1795000000000","pendingRefundReviewNotification":"#
            + #"{"orderId":"GPA.8","pendingRefundToken":"t8"}}"#
        let messages = [
            subscription("long", long), subscription("short", "token-short"),
            RTDNMessage(
                messageId: "review", data: Data(review.utf8).base64EncodedString(), publishTime: nil,
                packageName: "com.droid"),
        ]
        #expect(messages[0].subscriptionChange == nil)
        #expect(messages[0].unknownBecause?.contains("longer than \(LedgerLimits.maxKeyBytes) bytes") == true)
        _ = try connection.transaction { try intake.store(messages, in: environment, on: $0) }
        #expect(try Self.count(connection, "rtdn_message") == 3)
        #expect(try Self.count(connection, "recheck_request") == 1)
        #expect(try Self.count(connection, "recheck_request WHERE purchase_id = 'token-short'") == 1)
        #expect(try Self.count(connection, "refund_request WHERE transaction_id = 'GPA.8'") == 1)
        #expect(counters["messages_unknown"] == 1)
    }
}
