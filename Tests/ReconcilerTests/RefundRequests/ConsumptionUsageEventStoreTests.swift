import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// `consumption_usage_event` on a real database: at most 1000 events, the most recent first, descriptions cut to
/// Google's 5000 characters, and nothing left once deleted or purged.
@Suite("ConsumptionUsageEventStore")
struct ConsumptionUsageEventStoreTests {
    /// The purchase ids whose evidence is still stored, in order.
    static func left(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT purchase_id FROM consumption_usage_event ORDER BY 1").map {
            try $0.decode("purchase_id", as: String.self)
        }
    }

    @Test func atMostAThousandMostRecentFirstCutToGooglesLimitsThenGone() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "usageevents"))
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute(
            """
            INSERT INTO consumption_usage_event (purchase_id, consumption_time, ip_address, region_code, item_description)
            SELECT CASE WHEN n % 2 = 0 THEN 'GPA.1' ELSE 'token-1' END,
                   '2026-07-01T00:00:00Z'::timestamptz + n * interval '1 minute', '192.0.2.' || (n % 250),
                   'FR', CASE WHEN n = 1200 THEN repeat('é', 6000) END
            FROM generate_series(1, 1200) AS n
            """)
        try connection.execute("INSERT INTO consumption_usage_event (purchase_id, ip_address) VALUES ('GPA.2', '::1')")
        let found = try ConsumptionUsageEventStore.events(
            forEach: [["GPA.2"], ["GPA.1", "token-1"], []], on: connection)
        // Each purchase's own events, none of another's.
        #expect(found.count == 3 && found[0].map(\.ipAddress) == ["::1"] && found[2].isEmpty)
        let events = found[1]
        #expect(events.count == 1000)
        #expect(events.first?.consumptionTime == Date(timeIntervalSince1970: 1_782_864_000 + 1200 * 60))
        #expect(events.last?.consumptionTime == Date(timeIntervalSince1970: 1_782_864_000 + 201 * 60))
        #expect(events.first?.consumptionItemDescription == String(repeating: "é", count: 5000))
        #expect(events.first?.location == .init(regionCode: "FR"))

        #expect(
            try ConsumptionUsageEventStore.deleteUnshared(
                ids: ["GPA.1", "token-1"], app: "a", now: Date(), on: connection) == 1200)
        #expect(try ConsumptionUsageEventStore.events(forEach: [["GPA.1", "token-1"]], on: connection) == [[]])
        #expect(try ConsumptionUsageEventStore.purge(before: Date().addingTimeInterval(60), on: connection) == 1)
    }

    /// Google requires a location's `regionCode`: a row the backend wrote with a blank one goes without its
    /// location, and blank texts go as absent, not as `""`.
    @Test func blankTextsAndALocationWithoutItsRegionAreLeftOut() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "usageblank"))
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute(
            """
            INSERT INTO consumption_usage_event (purchase_id, consumption_time, ip_address, region_code, locality,
                                                 obfuscated_account_id)
            VALUES ('GPA.3', '2026-07-01T00:00:00Z', '', ' ', 'Paris', 'acct'),
                   ('GPA.3', '2026-06-30T00:00:00Z', '198.51.100.7', 'FR', '', NULL)
            """)
        let events = try ConsumptionUsageEventStore.events(forEach: [["GPA.3"]], on: connection)[0]
        #expect(events.count == 2)
        #expect(events[0].ipAddress == nil && events[0].location == nil && events[0].obfuscatedAccountId == "acct")
        #expect(events[1].ipAddress == "198.51.100.7" && events[1].location == .init(regionCode: "FR"))
        let body = String(decoding: try JSONEncoder().encode(events[0]), as: UTF8.self)
        #expect(!body.contains("ipAddress") && !body.contains("location"))
    }

    /// A subscription's purchase token is named by the reviews of all its renewal orders: giving one up (missed,
    /// refused) keeps the token's evidence while another review of it may still send it; an answer, which sent it,
    /// deletes it whatever waits.
    @Test func evidenceUnderATokenAnotherOpenRequestNamesIsKeptUntilSent() throws {
        let connection = try PostgresConnection(conninfo: try RefundRequestAnswererTests().database(2))
        defer { connection.close() }
        try connection.execute(
            "UPDATE refund_request SET original_id = 'token' WHERE transaction_id IN ('t001', 't002')")
        try connection.execute(
            """
            INSERT INTO consumption_usage_event (purchase_id, ip_address)
            VALUES ('t001', '192.0.2.1'), ('token', '192.0.2.2'), ('t002', '192.0.2.3')
            """)
        func left() throws -> [String] { try Self.left(connection) }
        let now = RefundRequestAnswererTests.received
        try connection.execute("UPDATE refund_request SET answer = 'missed' WHERE transaction_id = 't001'")
        try ConsumptionUsageEventStore.deleteUnshared(ids: ["t001", "token"], app: "ios", now: now, on: connection)
        #expect(try left() == ["t002", "token"])
        // A sibling without facts keeps it only until its deadline: then nothing will send it.
        try connection.execute("UPDATE refund_request SET answer = 'no_facts' WHERE transaction_id = 't002'")
        try ConsumptionUsageEventStore.deleteUnshared(ids: ["t001", "token"], app: "ios", now: now, on: connection)
        #expect(try left() == ["t002", "token"])
        try connection.execute(
            "UPDATE refund_request SET deadline = $1 WHERE transaction_id = 't002'", [now.addingTimeInterval(-1)])
        try ConsumptionUsageEventStore.deleteUnshared(ids: ["t001", "token"], app: "ios", now: now, on: connection)
        #expect(try left() == ["t002"])
        // Sent with an answer: gone, though another review of the token could still use it.
        try connection.execute(
            "INSERT INTO consumption_usage_event (purchase_id, ip_address) VALUES ('token', '192.0.2.4')")
        try connection.execute(
            "UPDATE refund_request SET answer = NULL, deadline = $1 WHERE transaction_id = 't002'",
            [now.addingTimeInterval(3600)])
        #expect(try ConsumptionUsageEventStore.delete(ids: ["t001", "token"], on: connection) == 1)
        #expect(try left() == ["t002"])
    }

    /// A request left without facts past its deadline will never be answered: its usage evidence (IP addresses,
    /// locations) goes at the next run's start, not at the retention purge months later; an open one keeps its own.
    @Test func theEvidenceOfARequestThatCanNoLongerBeAnsweredIsDropped() throws {
        let connection = try PostgresConnection(conninfo: try RefundRequestAnswererTests().database(2))
        defer { connection.close() }
        try connection.execute(
            """
            UPDATE refund_request SET answer = 'no_facts', deadline = $1 WHERE transaction_id = 't001'
            """, [RefundRequestAnswererTests.received.addingTimeInterval(-1)])
        try connection.execute(
            """
            INSERT INTO consumption_usage_event (purchase_id, ip_address)
            VALUES ('t001', '192.0.2.1'), ('o-t001', '192.0.2.2'), ('t002', '192.0.2.3')
            """)
        try RefundRequestStore(appId: "ios").closeInterrupted(in: RefundRequestAnswererTests().environment(connection))
        let left = try Self.left(connection)
        #expect(left == ["t002"])
    }

    /// A purchase id another open request shares (a subscription's purchase token, named by the review of its next
    /// renewal) keeps its evidence when an older request of it ends without an answer.
    @Test func evidenceAnOpenRequestSharesIsKept() throws {
        let connection = try PostgresConnection(conninfo: try RefundRequestAnswererTests().database(2))
        defer { connection.close() }
        try connection.execute(
            """
            UPDATE refund_request SET original_id = 'token' WHERE transaction_id IN ('t001', 't002');
            """)
        try connection.execute(
            "UPDATE refund_request SET answer = 'no_facts', deadline = $1 WHERE transaction_id = 't001'",
            [RefundRequestAnswererTests.received.addingTimeInterval(-1)])
        try connection.execute(
            "INSERT INTO consumption_usage_event (purchase_id, ip_address) VALUES ('t001', '192.0.2.1'), ('token', '192.0.2.2')"
        )
        try RefundRequestStore(appId: "ios").closeInterrupted(in: RefundRequestAnswererTests().environment(connection))
        let left = try Self.left(connection)
        #expect(left == ["token"])
    }

    /// An answer sends the evidence of its order and purchase token; none of it stays, though another review of the
    /// token (without facts yet) still waits: that one keeps only its own order's.
    @Test func anAnswerTakesTheEvidenceItSentWhateverWaits() async throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "usagesent"))
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('play', 'google', 'com.play')")
        let received = RefundRequestAnswererTests.received
        let requests = ["GPA.1", "GPA.2"].map { order in
            NewRefundRequest(
                store: .google, requestId: "m-\(order)", transactionId: order, originalId: "token", productId: "coins",
                productType: "inapp", country: "FR", familyShared: false, reason: "CHARGEBACK",
                pendingToken: "pending-\(order)", receivedAt: received, purchasedAt: nil, firstPurchasedAt: nil,
                expiresAt: nil)
        }
        let store = RefundRequestStore(appId: "play")
        try store.insert(requests, runId: nil, on: connection)
        let facts = ConsumptionFacts(
            customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 25_000,
            sampleContentProvided: false, asOf: received.addingTimeInterval(-86_400))
        _ = try ConsumptionFactStore.upsert(
            [ConsumptionFactRow(platform: .google, purchaseId: "GPA.1", facts: facts)], on: connection)
        try connection.execute(
            """
            INSERT INTO consumption_usage_event (purchase_id, ip_address)
            VALUES ('GPA.1', '192.0.2.1'), ('token', '192.0.2.2'), ('GPA.2', '192.0.2.3')
            """)
        let bodies = Mutex<[String]>([])
        let answerer = RefundRequestAnswerer(
            requests: store, decider: RefundRequestDecider(rules: RefundRequestRules()),
            send: { body, _ in
                bodies.withLock { $0.append(String(decoding: body, as: UTF8.self)) }
                return .answered
            })
        try await answerer.answerOpen(in: RefundRequestAnswererTests().environment(connection))
        #expect(bodies.withLock { $0.count } == 1)
        #expect(bodies.withLock { $0.first?.contains("192.0.2.2") } == true)
        let answers = try connection.query("SELECT transaction_id, answer FROM refund_request ORDER BY 1").map {
            "\(try $0.decode("transaction_id", as: String.self)) \(try $0.decode("answer", as: String.self))"
        }
        #expect(answers == ["GPA.1 answered", "GPA.2 no_facts"])
        let left = try Self.left(connection)
        #expect(left == ["GPA.2"])
    }

    /// A send a crash interrupted leaves the evidence of a purchase token that a review without facts yet (which may
    /// still be answered) also names.
    @Test func anInterruptedSendKeepsEvidenceAWaitingReviewWithoutFactsShares() throws {
        let connection = try PostgresConnection(conninfo: try RefundRequestAnswererTests().database(2))
        defer { connection.close() }
        let now = Date()
        try connection.execute(
            """
            UPDATE refund_request SET original_id = 'token', deadline = $1 WHERE transaction_id IN ('t001', 't002')
            """, [now.addingTimeInterval(3600)])
        try connection.execute("UPDATE refund_request SET sending_since = $1 WHERE transaction_id = 't001'", [now])
        try connection.execute("UPDATE refund_request SET answer = 'no_facts' WHERE transaction_id = 't002'")
        try connection.execute(
            "INSERT INTO consumption_usage_event (purchase_id, ip_address) VALUES ('t001', '192.0.2.1'), ('token', '192.0.2.2')"
        )
        #expect(try RefundRequestStore(appId: "ios").closeInterrupted(on: connection) == 1)
        let left = try Self.left(connection)
        #expect(left == ["token"])
    }
}
