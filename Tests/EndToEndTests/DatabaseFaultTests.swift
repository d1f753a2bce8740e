import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// The database fails under a nightly run of the built binary: the server stopped and restarted, a session killed by
/// the server, a statement timeout, a transaction rolled back half-way, a failover to the standby a multi-host
/// conninfo names. Each ends with a clear error naming the database (exit 75 when the next run can finish the work),
/// leaves nothing half-written, and a rerun ends equal to an uninterrupted run.
@Suite("chaos: the database fails under a nightly run", .serialized)
struct DatabaseFaultTests {
    /// The chaos scenario, with Apple's refund history answering slowly so that a run lasts long enough for an
    /// attack to land inside its Apple refund job.
    static let options: SimulatorOptions = {
        var options = Chaos.options
        options.faults[.appleRefundHistory] = FaultSettings(rates: [.slow: 1], slowMillis: 150)
        return options
    }()

    /// Waits until the nightly run is inside its Apple refund job with some refunds stored, so the attack cuts work
    /// in progress. Returns false when the run ended first.
    func waitForAppleJob(_ conninfo: String, process: Process) async throws -> Bool {
        let watcher = try Chaos.connect(conninfo)
        defer { watcher.close() }
        while process.isRunning {
            let row = try watcher.query(
                """
                SELECT (SELECT count(*)::int FROM job_run WHERE job = 'apple_refunds' AND finished_at IS NULL) AS jobs,
                       (SELECT count(*)::int FROM refund WHERE platform = 'apple') AS refunds
                """)[0]
            if try row.decode("jobs", as: Int.self) > 0 && row.decode("refunds", as: Int.self) > 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// The rerun after an attack: exit 0, equal to the reference (see `Chaos.expectEqual`), nothing half-written.
    func expectRerunEquals(
        _ expected: Chaos.Snapshot, _ stores: SimulatedStores, snapshotAt conninfo: String? = nil,
        orderedLikeTheReference: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let rerun = try await Chaos.storerecon(stores, ["run", "nightly"])
        #expect(rerun.status == 0, "\(rerun.stderr.suffix(2000))", sourceLocation: sourceLocation)
        try Chaos.expectEqual(
            conninfo ?? stores.conninfo, expected, orderedLikeTheReference: orderedLikeTheReference,
            sourceLocation: sourceLocation)
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    func waitForReplay(from primary: TestCluster, to standby: TestCluster, database: String) async throws {
        let source = try PostgresConnection(conninfo: primary.conninfo(database: database))
        defer { source.close() }
        let target = try PostgresConnection(conninfo: standby.conninfo(database: database))
        defer { target.close() }
        // The insert position, not the flush position: with synchronous_commit off a commit returns before its WAL
        // is flushed, and the flush position can still lie before the import's commit.
        let written: String = try source.query("SELECT pg_current_wal_insert_lsn()::text AS lsn")[0].decode("lsn")
        for _ in 0..<3000 {
            let caughtUp: Bool = try target.query(
                "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done", [written])[0].decode("done")
            if caughtUp { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the standby did not replay the primary's WAL within 60 s")
    }

    /// Creates a database on a cluster of the test's own and returns its conninfo.
    func createDatabase(on cluster: TestCluster, _ name: String) throws -> String {
        let admin = try PostgresConnection(conninfo: cluster.conninfo(database: "postgres"))
        defer { admin.close() }
        try admin.executeScript("CREATE DATABASE \(name)")
        return cluster.conninfo(database: name)
    }

    @Test func theServerStoppedMidRunThenRestartedLosesNothing() async throws {
        let cluster = try TestCluster.primary()
        defer { cluster.remove() }
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let expected = try await Chaos.reference(simulator)
            let stores = try await Chaos.stores(
                simulator, prefix: "dbstop", conninfo: createDatabase(on: cluster, "dbstop"))
            let (process, _, errors) = try Chaos.startNightly(stores)
            #expect(try await waitForAppleJob(stores.conninfo, process: process), "the run ended before the attack")
            try cluster.stop(mode: "immediate")
            await BuiltExecutable.waitForExit(process)
            let log = Chaos.text(errors)
            #expect(process.terminationStatus == 75, "\(log.suffix(2000))")
            #expect(log.contains("postgres"), "the error does not name the database: \(log.suffix(1000))")
            try cluster.start()
            try Chaos.expectNoWrongRefund(stores.conninfo, expected)
            try await expectRerunEquals(expected, stores)
        }
    }

    @Test func aSessionKilledByTheServerEndsWith75AndTheRerunFinishes() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let expected = try await Chaos.reference(simulator)
            let stores = try await Chaos.stores(simulator, prefix: "dbterm")
            let (process, _, errors) = try Chaos.startNightly(stores)
            #expect(try await waitForAppleJob(stores.conninfo, process: process), "the run ended before the attack")
            let killer = try Chaos.connect(stores.conninfo)
            defer { killer.close() }
            let killed: Int = try killer.query(
                """
                SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'storerecon'
                """)[0].decode("n")
            #expect(killed > 0)
            await BuiltExecutable.waitForExit(process)
            let log = Chaos.text(errors)
            #expect(process.terminationStatus == 75, "\(log.suffix(2000))")
            #expect(log.contains("57P01") || log.contains("terminat"), "\(log.suffix(1000))")
            try Chaos.expectNoWrongRefund(stores.conninfo, expected)
            #expect(try Chaos.halfWritten(stores.conninfo) == [])
            try await Chaos.waitForSessionsToEnd(stores.conninfo)
            try await expectRerunEquals(expected, stores, orderedLikeTheReference: false)
        }
    }

    /// A DBA's long lock on the ledger, with a statement timeout on the database: the page that waits for the lock
    /// is cancelled, the run says so and exits 75, and the next run finishes the work.
    @Test func aStatementTimeoutIsAClearErrorAndTheNextRunFinishes() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let expected = try await Chaos.reference(simulator)
            let stores = try await Chaos.stores(simulator, prefix: "dbtimeout")
            let dba = try Chaos.connect(stores.conninfo)
            defer { dba.close() }
            let database: String = try dba.query("SELECT current_database() AS name")[0].decode("name")
            // ALTER DATABASE takes no parameters; the name comes from the server itself.
            try dba.executeScript("ALTER DATABASE \(database) SET statement_timeout = '300ms'")
            try dba.executeScript("BEGIN; LOCK TABLE refund IN ACCESS EXCLUSIVE MODE")
            let outcome = try await Chaos.storerecon(stores, ["run", "nightly"])
            try dba.executeScript("ROLLBACK")
            try dba.executeScript("ALTER DATABASE \(database) RESET statement_timeout")
            #expect(outcome.status == 75, "\(outcome.stderr.suffix(2000))")
            #expect(outcome.stderr.contains("57014"), "\(outcome.stderr.suffix(2000))")
            #expect(outcome.stderr.contains("statement timeout"), "\(outcome.stderr.suffix(2000))")
            #expect(try Chaos.snapshot(stores.conninfo).refunds.isEmpty, "a refund was stored past the lock")
            try await expectRerunEquals(expected, stores, orderedLikeTheReference: false)
        }
    }

    /// A statement fails half-way through a page: the whole page's transaction rolls back with its checkpoint, and
    /// the subscription rows stay in step with their transitions. The refund trigger refuses every Google row (a
    /// database fault, not odd data: a refusal that strikes every row of a page alike stops the job rather than
    /// quarantine the page); the transition trigger strikes the third transition the recheck writes, once.
    @Test(arguments: ["refund", "subscription_transition"])
    func aTransactionRolledBackHalfWayLeavesNothingHalfWritten(table: String) async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let expected = try await Chaos.reference(simulator)
            let stores = try await Chaos.stores(simulator, prefix: "dbrollback")
            let dba = try Chaos.connect(stores.conninfo)
            defer { dba.close() }
            // A sequence is not rolled back, so the transition trigger strikes once.
            let condition = table == "refund" ? "NEW.platform = 'google'" : "nextval('chaos_seq') = 3"
            try dba.executeScript(
                """
                CREATE SEQUENCE chaos_seq;
                CREATE FUNCTION chaos_fail() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF \(condition) THEN RAISE EXCEPTION 'chaos: rolled back on purpose'; END IF;
                    RETURN NEW;
                END $$;
                CREATE TRIGGER chaos_fail BEFORE INSERT ON \(table) FOR EACH ROW EXECUTE FUNCTION chaos_fail();
                """)
            let outcome = try await Chaos.storerecon(stores, ["run", "nightly"])
            #expect(outcome.status == 1, "\(outcome.stderr.suffix(2000))")
            #expect(outcome.stderr.contains("chaos: rolled back on purpose"), "\(outcome.stderr.suffix(2000))")
            let now = try Chaos.snapshot(stores.conninfo)
            try Chaos.expectNoWrongRefund(stores.conninfo, expected)
            #expect(try Chaos.halfWritten(stores.conninfo) == [])
            if table == "refund" {
                #expect(!now.refunds.contains { $0.contains("|google|") }, "part of the rolled-back page was kept")
                let checkpoints: Int = try dba.query(
                    """
                    SELECT count(*)::int AS n FROM sync_checkpoint
                    WHERE job = 'google_voided' AND (high_water IS NOT NULL OR pages_done > 0)
                    """)[0].decode("n")
                #expect(checkpoints == 0, "the checkpoint moved past a page that was not stored")
            }
            try dba.executeScript("DROP TRIGGER chaos_fail ON \(table)")
            try await expectRerunEquals(expected, stores, orderedLikeTheReference: false)
        }
    }

    /// `host=standby,primary target_session_attrs=read-write`: libpq passes over the read-only standby to the
    /// primary; the primary crashes mid-run (exit 75), the standby is promoted, and the next run, with the same
    /// configuration, lands on it and finishes the work. Asynchronous replication may lose the primary's last
    /// commits; the rerun fetches those again.
    @Test func aFailoverToTheStandbyOfAMultiHostConninfoFinishesTheWork() async throws {
        let primary = try TestCluster.primary()
        defer { primary.remove() }
        let database = "failover"
        _ = try createDatabase(on: primary, database)
        let standby = try primary.standby()
        defer { standby.remove() }
        let conninfo =
            "host=\(standby.socketDirectory),\(primary.socketDirectory) port=5432,5432 user=postgres "
            + "dbname=\(database) target_session_attrs=read-write"
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let expected = try await Chaos.reference(simulator)
            let stores = try await Chaos.stores(simulator, prefix: "failover", conninfo: conninfo)
            // The standby holds what was there before the run (the schema, the imported subscriptions); what the run
            // commits it may or may not receive before the crash.
            try await waitForReplay(from: primary, to: standby, database: database)
            let onStandby = try Chaos.snapshot(standby.conninfo(database: database)).subscriptions.count
            let onPrimary = try Chaos.snapshot(stores.conninfo).subscriptions.count
            #expect(onStandby == onPrimary, "the standby lags before the run")
            let (process, _, errors) = try Chaos.startNightly(stores)
            #expect(
                try await waitForAppleJob(primary.conninfo(database: database), process: process),
                "the run ended before the attack")
            try primary.stop(mode: "immediate")
            await BuiltExecutable.waitForExit(process)
            let log = Chaos.text(errors)
            #expect(process.terminationStatus == 75, "\(log.suffix(2000))")
            try standby.promote()
            let promoted = try Chaos.snapshot(standby.conninfo(database: database))
            #expect(promoted.subscriptions.count == onStandby, "the promoted standby lost rows: \(promoted)")
            try await expectRerunEquals(expected, stores, snapshotAt: standby.conninfo(database: database))
        }
    }
}
