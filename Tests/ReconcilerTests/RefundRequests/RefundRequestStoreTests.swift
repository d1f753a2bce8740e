import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// `refund_request` and `consumption_fact` on a real database: a request is one row however often it is seen, a
/// send that a crash interrupted is never sent again, the nearest deadline comes first, the newest facts win.
@Suite("RefundRequestStore")
struct RefundRequestStoreTests {
    let received = Date(timeIntervalSince1970: 1_795_000_000)

    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "refundrequests"))
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        return connection
    }

    func review(_ messageId: String, order: String, token: String, hoursAgo: Double) -> NewRefundRequest {
        NewRefundRequest(
            store: .google, requestId: messageId, transactionId: order, originalId: nil, productId: nil,
            productType: nil, country: nil, familyShared: false, reason: "CHARGEBACK", pendingToken: token,
            receivedAt: received.addingTimeInterval(-hoursAgo * 3600), purchasedAt: nil, firstPurchasedAt: nil,
            expiresAt: nil)
    }

    @Test func aRequestSeenAgainIsOneRowAndTheNearestDeadlineComesFirst() throws {
        let connection = try database()
        defer { connection.close() }
        let store = RefundRequestStore(appId: "droid")
        let first = review("m1", order: "GPA.1", token: "t1", hoursAgo: 2)
        #expect(try store.insert([first], runId: nil, on: connection) == ["m1"])
        #expect(try store.insert([first], runId: nil, on: connection).isEmpty)
        // The same review published again under another message id.
        let again = review("m9", order: "GPA.1", token: "t1", hoursAgo: 2)
        #expect(try store.insert([again], runId: nil, on: connection).isEmpty)
        #expect(
            try store.insert([review("m2", order: "GPA.2", token: "t2", hoursAgo: 20)], runId: nil, on: connection)
                == ["m2"])
        let open = try store.open(limit: 10, now: received, on: connection)
        #expect(open.map(\.request.requestId) == ["m2", "m1"])
        #expect(open.first?.deadline == received.addingTimeInterval(4 * 3600))
    }

    @Test func aSendThatACrashInterruptedIsRecordedFailedAndNeverSentAgain() throws {
        let connection = try database()
        defer { connection.close() }
        let store = RefundRequestStore(appId: "droid")
        try store.insert([review("m1", order: "GPA.1", token: "t1", hoursAgo: 1)], runId: nil, on: connection)
        let id = try #require(try store.open(limit: 1, now: received, on: connection).first?.id)
        let verdict = RefundRequestVerdict(answer: nil, rule: "default", preference: .dataOnly)
        let claim = RefundRequestStore.Claim(id: id, verdict: verdict, facts: Data("{}".utf8), body: Data("{}".utf8))
        #expect(try store.claim([claim], on: connection) == [id])
        #expect(try store.claim([claim], on: connection).isEmpty)
        #expect(try store.open(limit: 10, now: received, on: connection).isEmpty)
        try connection.execute(
            "INSERT INTO consumption_usage_event (purchase_id, ip_address) VALUES ('GPA.1', '192.0.2.1'), ('GPA.2', '::1')"
        )
        // The next run: the evidence that may have been sent goes too.
        #expect(try store.closeInterrupted(on: connection) == 1)
        let left = try connection.query("SELECT purchase_id FROM consumption_usage_event")
        #expect(try left.map { try $0.decode("purchase_id", as: String.self) } == ["GPA.2"])
        let row = try connection.query("SELECT answer, error_code FROM refund_request WHERE id = $1", [id])[0]
        #expect(try row.decode("answer", as: String.self) == "failed")
        #expect(try row.decode("error_code", as: String.self) == "interrupted")
        #expect(try store.open(limit: 10, now: received, on: connection).isEmpty)
    }

    @Test func theNewestFactsWin() throws {
        let connection = try database()
        defer { connection.close() }
        func row(_ percent: Int, asOf seconds: Double) -> ConsumptionFactRow {
            ConsumptionFactRow(
                platform: .google, purchaseId: "GPA.1",
                facts: ConsumptionFacts(
                    customerConsented: true, deliveryStatus: .delivered, consumptionMilli: percent * 1000,
                    sampleContentProvided: false, asOf: Date(timeIntervalSince1970: seconds)))
        }
        #expect(try ConsumptionFactStore.upsert([row(10, asOf: 2000)], on: connection) == 1)
        #expect(try ConsumptionFactStore.upsert([row(20, asOf: 1000)], on: connection) == 0)
        let kept = try ConsumptionFactStore.facts(platform: .google, ids: ["x", "GPA.1"], on: connection)
        #expect(kept?.consumptionMilli == 10_000)
        #expect(try ConsumptionFactStore.upsert([row(30, asOf: 3000)], on: connection) == 1)
        #expect(
            try ConsumptionFactStore.facts(platform: .google, ids: ["GPA.1"], on: connection)?.consumptionMilli
                == 30_000)
        #expect(try ConsumptionFactStore.facts(platform: .apple, ids: ["GPA.1"], on: connection) == nil)
    }

    @Test func factsOlderThanTheRetentionArePurged() throws {
        let connection = try database()
        defer { connection.close() }
        let day: Double = 86_400
        func row(_ id: String, daysAgo: Double) -> ConsumptionFactRow {
            ConsumptionFactRow(
                platform: .google, purchaseId: id,
                facts: ConsumptionFacts(
                    customerConsented: true, deliveryStatus: .delivered, consumptionMilli: nil,
                    sampleContentProvided: false, asOf: received.addingTimeInterval(-daysAgo * day)))
        }
        _ = try ConsumptionFactStore.upsert([row("old", daysAgo: 181), row("new", daysAgo: 179)], on: connection)
        let store = RefundRequestStore(appId: "droid")
        try store.insert([review("m1", order: "old", token: "t1", hoursAgo: 181 * 24)], runId: nil, on: connection)
        try connection.execute(
            """
            UPDATE refund_request SET facts = '{"facts":1}',
                body_sent = '{"pendingRefundToken":"t1","refundPreference":"DECLINE","sampleContentProvided":false,
                              "consumptionPercentageMilliunits":73000,"consumptionUsageEventsSent":2}'
            """)
        try connection.execute(
            """
            INSERT INTO rtdn_message (app_id, message_id, kind, notification, received_at)
            VALUES ('droid', 'old', 'test', '{}', $1), ('droid', 'new', 'test', '{}', $2)
            """, [received.addingTimeInterval(-181 * day), received.addingTimeInterval(-day)])
        let purged = try ConsumptionFactStore.purge(
            retention: RefundRequestsConfig().retention, now: received, on: connection)
        #expect(purged == 1)
        #expect(try ConsumptionFactStore.facts(platform: .google, ids: ["old"], on: connection) == nil)
        #expect(try ConsumptionFactStore.facts(platform: .google, ids: ["new"], on: connection) != nil)
        let kept = try connection.query(
            "SELECT facts IS NULL AS gone, pending_token, body_sent::text AS body FROM refund_request")[0]
        #expect(try kept.decode("gone", as: Bool.self))
        #expect(try kept.decodeIfPresent("pending_token", as: String.self) == nil)
        #expect(try kept.decode("body", as: String.self) == #"{"refundPreference": "DECLINE"}"#)
        let messages: [String] = try connection.query("SELECT message_id FROM rtdn_message").map {
            try $0.decode("message_id")
        }
        #expect(messages == ["new"])
    }
}
