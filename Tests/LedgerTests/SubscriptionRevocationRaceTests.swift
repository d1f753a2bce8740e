import Foundation
import Postgres
import Reconciler
import Synchronization
import TestSupport
import Testing

@testable import Ledger

/// A refund and a recheck changing one subscription at once: the refund's statement takes its snapshot, a recheck
/// commits a renewal (a new current order) while the refund waits for the row, and the refund then updates the
/// row's newest version. The refund of the order the renewal replaced must not revoke the renewed subscription.
@Suite struct SubscriptionRevocationRaceTests {
    /// A connection handed to the thread that blocks on it (the test's own thread waits for it, never both at once).
    final class Session: @unchecked Sendable {
        let connection: PostgresConnection
        init(_ connection: PostgresConnection) { self.connection = connection }
    }

    @Test func aRenewalCommittedWhileARefundWaitsIsNotRevokedByTheReplacedOrdersRefund() throws {
        let conninfo = try TestDatabase.create(prefix: "revokerace")
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state, current_order_id)
            VALUES ('droid', 'token-1', 'monthly', 'active', 'GPA.1')
            """)
        let refunder = Session(try PostgresConnection(conninfo: conninfo))
        defer { refunder.connection.close() }
        let refunderPID = refunder.connection.backendPID

        try connection.execute("BEGIN")
        try connection.execute(
            "UPDATE subscription SET current_order_id = 'GPA.1..0', state = 'active', entitled = true")
        let failure = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            do {
                try SubscriptionLedger.applyRefunds(
                    app: "droid", storeIds: ["token-1"], orderIds: ["GPA.1"], source: "google_voided", runId: nil,
                    on: refunder.connection)
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        thread.start()
        // The refund's statement is waiting for the renewal's row lock (asked of the server, not timed).
        let watcher = try PostgresConnection(conninfo: conninfo)
        defer { watcher.close() }
        var waiting = false
        for _ in 0..<6000 where !waiting {
            waiting =
                try watcher.query(
                    "SELECT count(*) AS n FROM pg_locks WHERE pid = $1 AND NOT granted", [refunderPID]
                )[0].decode("n", as: Int64.self) > 0
            if !waiting { usleep(10_000) }
        }
        #expect(waiting, "the refund never waited for the renewal's lock")
        try connection.execute("COMMIT")
        done.wait()
        #expect(failure.withLock { $0 } == nil)

        let row = try connection.query(
            """
            SELECT state, entitled, current_order_id, flagged_at IS NOT NULL AS flagged,
                   (SELECT count(*) FROM subscription_transition) AS transitions
            FROM subscription WHERE store_id = 'token-1'
            """)[0]
        #expect(try row.decode("state", as: String.self) == "active")
        #expect(try row.decode("entitled", as: Bool.self))
        #expect(try row.decode("current_order_id", as: String.self) == "GPA.1..0")
        #expect(try row.decode("transitions", as: Int64.self) == 0)
        // The refund of an order no longer current leaves the question to the recheck.
        #expect(try row.decode("flagged", as: Bool.self))
    }
}
