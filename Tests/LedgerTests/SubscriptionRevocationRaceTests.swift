import Foundation
import Postgres
import Reconciler
import Synchronization
import TestSupport
import Testing

@testable import Ledger

/// What a refund does to its subscription (`SubscriptionLedger.applyRefunds`), alone and while a recheck changes the
/// same row: the refund's statement takes its snapshot, the recheck commits while the refund waits for the row, and
/// the refund then updates the row's newest version.
@Suite struct SubscriptionRevocationRaceTests {
    /// A connection handed to the thread that blocks on it (the test's own thread waits for it, never both at once).
    final class Session: @unchecked Sendable {
        let connection: PostgresConnection
        init(_ connection: PostgresConnection) { self.connection = connection }
    }

    /// Runs `work` on `session` on a thread of its own, waits until that session waits for a lock (asked of the
    /// server, not timed), then runs `release`; returns the work's error, if any, once it ends.
    static func blocked(
        _ session: Session, conninfo: String, _ work: @escaping @Sendable (PostgresConnection) throws -> Void,
        until release: () throws -> Void
    ) throws -> String? {
        let pid = session.connection.backendPID
        let failure = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            do {
                try work(session.connection)
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        thread.start()
        let watcher = try PostgresConnection(conninfo: conninfo)
        defer { watcher.close() }
        var waiting = false
        for _ in 0..<6000 where !waiting {
            waiting =
                try watcher.query("SELECT count(*) AS n FROM pg_locks WHERE pid = $1 AND NOT granted", [pid])[0]
                .decode("n", as: Int64.self) > 0
            if !waiting { usleep(10_000) }
        }
        #expect(waiting, "the session never waited for the other's lock")
        try release()
        done.wait()
        return failure.withLock { $0 }
    }

    /// The subscription as the refund left it.
    struct After: Equatable {
        var state: String
        var entitled: Bool
        var flagged: Bool
        var transitions: Int64
    }

    /// A fresh database with one Google subscription, active on order GPA.1.
    func database() throws -> (String, PostgresConnection) {
        let conninfo = try TestDatabase.create(prefix: "revokerace")
        let connection = try PostgresConnection(conninfo: conninfo)
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state, current_order_id)
            VALUES ('droid', 'token-1', 'monthly', 'active', 'GPA.1')
            """)
        return (conninfo, connection)
    }

    func refund(_ orderId: String, on connection: PostgresConnection) throws {
        try SubscriptionLedger.applyRefunds(
            app: "droid", storeIds: ["token-1"], orderIds: [orderId], source: "google_voided", runId: nil,
            on: connection)
    }

    func after(_ connection: PostgresConnection) throws -> After {
        let row = try connection.query(
            """
            SELECT state, entitled, flagged_at IS NOT NULL AS flagged,
                   (SELECT count(*) FROM subscription_transition) AS transitions
            FROM subscription WHERE store_id = 'token-1'
            """)[0]
        return After(
            state: try row.decode("state"), entitled: try row.decode("entitled"), flagged: try row.decode("flagged"),
            transitions: try row.decode("transitions"))
    }

    /// Refunds GPA.1 while `recheck` (an UPDATE of the subscription) holds the row uncommitted, commits the recheck
    /// once the refund waits for its lock (asked of the server, not timed), and returns what the refund left.
    func refundWhile(_ recheck: String) throws -> After {
        let (conninfo, connection) = try database()
        defer { connection.close() }
        let refunder = Session(try PostgresConnection(conninfo: conninfo))
        defer { refunder.connection.close() }
        try connection.execute("BEGIN")
        try connection.execute(recheck)
        let failure = try Self.blocked(refunder, conninfo: conninfo, { try refund("GPA.1", on: $0) }) {
            try connection.execute("COMMIT")
        }
        #expect(failure == nil)
        return try after(connection)
    }

    @Test func aRenewalCommittedWhileARefundWaitsIsNotRevokedByTheReplacedOrdersRefund() throws {
        let left = try refundWhile(
            "UPDATE subscription SET current_order_id = 'GPA.1..0', state = 'active', entitled = true")
        // The refund of an order no longer current leaves the question to the recheck.
        #expect(left == After(state: "active", entitled: true, flagged: true, transitions: 0))
    }

    @Test func aRevocationCommittedWhileARefundWaitsIsNotLoggedTwice() throws {
        let left = try refundWhile("UPDATE subscription SET state = 'revoked', entitled = false")
        #expect(left == After(state: "revoked", entitled: false, flagged: false, transitions: 0))
    }

    @Test func theCurrentOrdersRefundRevokesOnceAndAnOlderOrdersFlags() throws {
        let (_, connection) = try database()
        defer { connection.close() }
        try refund("GPA.1", on: connection)
        #expect(try after(connection) == After(state: "revoked", entitled: false, flagged: false, transitions: 1))
        // The same refund stored again (the next night's overlap) changes nothing.
        try refund("GPA.1", on: connection)
        #expect(try after(connection) == After(state: "revoked", entitled: false, flagged: false, transitions: 1))
        try connection.execute(
            "UPDATE subscription SET current_order_id = 'GPA.1..1', state = 'active', entitled = true")
        try refund("GPA.1..0", on: connection)
        #expect(try after(connection) == After(state: "active", entitled: true, flagged: true, transitions: 1))
    }

    /// A row watched until the store settles its renewal (`entitled_past_expiry`, asked every 12 hours) is flagged
    /// anew by a refund of an order not current: due on the next run, with the refund's reason.
    @Test func aRefundFlagsARowWatchedForAnUnsettledRenewal() throws {
        let (_, connection) = try database()
        defer { connection.close() }
        try connection.execute(
            """
            UPDATE subscription SET current_order_id = 'GPA.1..1', entitled = true, last_checked_at = now(),
                flagged_at = now() - interval '1 hour', flag_reason = 'entitled_past_expiry'
            """)
        try refund("GPA.1..0", on: connection)
        let row = try connection.query(
            "SELECT flag_reason, flagged_at > last_checked_at AS due FROM subscription WHERE store_id = 'token-1'")[0]
        #expect(try row.decode("flag_reason", as: String.self) == "google_voided")
        #expect(try row.decode("due", as: Bool.self))
    }
}
