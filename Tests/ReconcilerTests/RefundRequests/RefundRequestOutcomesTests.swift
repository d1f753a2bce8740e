import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// The outcomes the ledger gives, on a real database: Apple's refund of the transaction since the request, Google's
/// void of the order by the end of the review; reversals and refunds outside those times do not count.
@Suite("RefundRequestStore: outcomes from the ledger")
struct RefundRequestOutcomesTests {
    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "requestoutcomes"))
        try Migrator(connection: connection).migrate()
        let setup = """
            INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.x'), ('droid', 'google', 'com.x');
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, received_at, deadline, decision)
            VALUES ('ios', 'apple', 'a1', 't1', '2026-07-01T00:00:00Z', '2026-07-01T12:00:00Z', 'pending'),
                   ('ios', 'apple', 'a2', 't2', '2026-07-01T00:00:00Z', '2026-07-01T12:00:00Z', 'pending'),
                   ('ios', 'apple', 'a3', 't3', '2026-07-01T00:00:00Z', '2026-07-01T12:00:00Z', NULL),
                   ('ios', 'apple', 'a4', 't4', '2026-07-01T00:00:00Z', '2026-07-01T12:00:00Z', 'declined'),
                   ('droid', 'google', 'g1', 'GPA.1', '2026-07-01T00:00:00Z', '2026-07-02T00:00:00Z', 'pending'),
                   ('droid', 'google', 'g2', 'GPA.2', '2026-07-01T00:00:00Z', '2026-07-02T00:00:00Z', 'pending'),
                   ('droid', 'google', 'g3', 'GPA.3', '2026-07-02T00:00:00Z', '2026-07-03T00:00:00Z', NULL);
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, percentage_milli, reversed_at,
                                payload)
            VALUES ('ios', 'apple', 't1', '2026-07-01T05:00:00Z', 'prorated', 40000, NULL, '{}'),
                   ('ios', 'apple', 't2', '2026-07-01T05:00:00Z', 'full', NULL, '2026-07-01T06:00:00Z', '{}'),
                   ('ios', 'apple', 't3', '2026-06-30T05:00:00Z', 'full', NULL, NULL, '{}'),
                   ('ios', 'apple', 't4', '2026-07-01T05:00:00Z', 'full', NULL, NULL, '{}'),
                   ('droid', 'google', 'GPA.1', '2026-07-02T23:00:00Z', 'full', NULL, NULL, '{}'),
                   ('droid', 'google', 'GPA.2', '2026-07-03T01:00:00Z', 'full', NULL, NULL, '{}'),
                   ('droid', 'google', 'GPA.3', '2026-07-02T05:00:00Z', 'full', NULL, NULL, '{}')
            """
        for statement in setup.components(separatedBy: ";\n") { try connection.execute(statement) }
        return connection
    }

    func decisions(_ connection: PostgresConnection, store: String) throws -> [String: String] {
        var found: [String: String] = [:]
        let sql = "SELECT request_id, coalesce(decision, '-') AS d FROM refund_request WHERE store = $1"
        for row in try connection.query(sql, [store]) {
            found[try row.decode("request_id")] = try row.decode("d")
        }
        return found
    }

    @Test func appleRefundsSinceTheRequestMakeItRefunded() throws {
        let connection = try database()
        defer { connection.close() }
        // t1: refunded (40 %); t2: its refund was reversed; t3: refunded before the request; t4: Apple declined.
        #expect(try RefundRequestStore(appId: "ios").appleOutcomesFromLedger(on: connection) == 1)
        let found = try decisions(connection, store: "apple")
        #expect(
            found["a1"] == "refunded" && found["a2"] == "pending" && found["a3"] == "-" && found["a4"] == "declined")
        let milli = try connection.query("SELECT revocation_milli FROM refund_request WHERE request_id = 'a1'")[0]
        #expect(try milli.decode("revocation_milli", as: Int.self) == 40_000)
    }

    @Test func googleVoidsByTheReviewsEndMakeItRefundedTheRestIsToBeRead() throws {
        let connection = try database()
        defer { connection.close() }
        let store = RefundRequestStore(appId: "droid")
        // 2026-07-03T00:00Z: g1 and g2's reviews ended then (deadline + 24 h); g3's ends a day later.
        let now = Date(timeIntervalSince1970: 1_783_036_800)
        let due = try store.reviewsEnded(reviewEndedBy: now, limit: 10, on: connection)
        // GPA.1 voided before its review ended; GPA.2 an hour after it: its order is to be read.
        #expect(try decisions(connection, store: "google") == ["g1": "refunded", "g2": "pending", "g3": "-"])
        #expect(due.map(\.orderId) == ["GPA.2"])
        try store.decide([(due[0].id, .declined)], at: now, on: connection)
        #expect(try store.reviewsEnded(reviewEndedBy: now, limit: 10, on: connection).isEmpty)
    }

    /// An ended review to read from the Orders API carries when Google asked about its order again, so a refund from
    /// then on is not credited to it as well as to the later review.
    @Test func aReviewToReadSaysWhenGoogleAskedAgain() throws {
        let connection = try database()
        defer { connection.close() }
        try connection.execute(
            """
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, received_at, deadline)
            VALUES ('droid', 'google', 'g2b', 'GPA.2', '2026-07-01T10:00:00Z', '2026-07-02T10:00:00Z')
            """)
        let now = Date(timeIntervalSince1970: 1_783_036_800)
        let due = try RefundRequestStore(appId: "droid").reviewsEnded(reviewEndedBy: now, limit: 10, on: connection)
        #expect(due.map(\.orderId) == ["GPA.2"])
        #expect(due.map(\.askedAgainAt) == [Date(timeIntervalSince1970: 1_782_900_000)])
    }
}
