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
}
