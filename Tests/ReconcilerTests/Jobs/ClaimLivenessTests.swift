import Foundation
import Ledger
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// A claim frees a row whose claiming session has ended, judged by `pg_stat_activity`, which a session lists once per
/// transaction. A session that connected after that list and claimed a row must not be taken for gone: here the
/// second claimer lists the sessions, then a new session claims the row, then the second claims.
@Suite("Claims by sessions newer than the claimer's list of sessions")
struct ClaimLivenessTests {
    func database() throws -> (String, PostgresConnection) {
        let conninfo = try TestDatabase.create(prefix: "claimlive")
        let connection = try PostgresConnection(conninfo: conninfo)
        try Migrator(connection: connection).migrate()
        try connection.execute(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.ios'),
                ('droid', 'google', 'com.droid')
            """)
        return (conninfo, connection)
    }

    /// Runs `claim` on `late`, a session opened after `listing` has listed the sessions in its open transaction,
    /// then `second` on `listing` in that transaction; returns once `late` has closed and its session has ended.
    func claimAfterTheList<T>(
        conninfo: String, listing: PostgresConnection, first claim: (PostgresConnection) throws -> T,
        then second: (PostgresConnection) throws -> T
    ) throws -> (T, T) {
        var latePID: Int32 = 0
        let claims = try listing.transaction { listing in
            #expect(try listing.query("SELECT count(*) AS n FROM pg_stat_activity")[0].decode("n", as: Int64.self) > 0)
            let late = try PostgresConnection(conninfo: conninfo)
            defer { late.close() }
            latePID = late.backendPID
            return (try claim(late), try second(listing))
        }
        // A closed connection's server process leaves pg_stat_activity a moment later (asked, not timed).
        var ended = false
        for _ in 0..<1000 where !ended {
            ended =
                try listing.query(
                    "SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1", [latePID])[0].decode(
                    "n", as: Int64.self)
                == 0
            if !ended { usleep(10_000) }
        }
        #expect(ended, "the closed session is still in pg_stat_activity after 10 s")
        return claims
    }

    @Test func anAppleCustomerClaimedByANewerSessionIsNotClaimedAgain() throws {
        let (conninfo, connection) = try database()
        defer { connection.close() }
        let cursors = AppleRefundCursorStore(appId: "ios")
        try cursors.queue(["2000000000000001"], reason: "REFUND", on: connection)
        func claim(_ worker: String) -> (PostgresConnection) throws -> String? {
            { connection in
                try cursors.claim(
                    .notified, worker: worker, leaseSeconds: 300, notCheckedSince: nil, recheckSeconds: 0,
                    on: connection)?.0
            }
        }
        let (first, second) = try claimAfterTheList(
            conninfo: conninfo, listing: connection, first: claim("late"), then: claim("listing"))
        #expect(first == "2000000000000001")
        #expect(second == nil)
        // A claim whose session has ended is still free at once.
        #expect(try claim("again")(connection) == "2000000000000001")
    }

    @Test func aSubscriptionClaimedByANewerSessionIsNotClaimedAgain() throws {
        let (conninfo, connection) = try database()
        defer { connection.close() }
        let id: Int64 = try connection.query(
            "INSERT INTO subscription (app_id, store_id, product_id) VALUES ('droid', 'token-1', 'p') RETURNING id"
        )[0].decode("id")
        func claim(_ claimer: String) -> (PostgresConnection) throws -> [Int64] {
            { connection in
                let now = Date()
                return try SubscriptionLedger.claim(
                    ids: [id], seenMicros: [nil], now: now, leaseUntil: now.addingTimeInterval(300), claimer: claimer,
                    returning: "id", on: connection
                ).map { try $0.decode("id") }
            }
        }
        let (first, second) = try claimAfterTheList(
            conninfo: conninfo, listing: connection, first: claim("late"), then: claim("listing"))
        #expect(first == [id])
        #expect(second.isEmpty)
        #expect(try claim("again")(connection) == [id])
    }
}

extension ClaimLivenessTests {
    /// A customer's chain read page by page renews its lease with each page its session stores, so a chain paced by
    /// Apple's throttling does not outlast its lease while still being read; another session's page renews nothing.
    @Test func eachPageStoredRenewsTheLeaseOfTheSessionReadingTheChain() throws {
        let (conninfo, connection) = try database()
        defer { connection.close() }
        let cursors = AppleRefundCursorStore(appId: "ios")
        try cursors.queue(["2000000000000002"], reason: "REFUND", on: connection)
        let claimed = try cursors.claim(
            .notified, worker: "w", leaseSeconds: 1, notCheckedSince: nil, recheckSeconds: 0, on: connection)
        #expect(claimed?.0 == "2000000000000002")
        func leaseLeft() throws -> Double {
            try connection.query(
                """
                SELECT extract(epoch FROM claimed_until - now())::float8 AS s FROM apple_refund_cursor
                WHERE original_transaction_id = '2000000000000002'
                """)[0].decode("s")
        }
        #expect(try leaseLeft() <= 1)
        let other = try PostgresConnection(conninfo: conninfo)
        defer { other.close() }
        try cursors.advance("2000000000000002", to: "r1", leaseSeconds: 300, on: other)
        #expect(try leaseLeft() <= 1)
        try cursors.advance("2000000000000002", to: "r2", leaseSeconds: 300, on: connection)
        #expect(try leaseLeft() > 250)
    }
}
