import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

@Suite("Migrator")
struct MigratorTests {
    @Test func migratesAnEmptyDatabaseThenChangesNothing() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "mig"))
        let applied = try Migrator(connection: connection).migrate()
        #expect(applied == Migration.embedded.map(\.name))
        for table in [
            "app", "subscription", "subscription_transition", "refund", "sync_checkpoint", "sync_gap",
            "apple_refund_cursor", "quota_bucket", "quota_day", "job_run",
        ] {
            let present = try connection.query("SELECT to_regclass($1) IS NOT NULL AS ok", [table])[0]
            #expect(try present.decode("ok", as: Bool.self), "table \(table)")
        }
        #expect(try Migrator(connection: connection).migrate().isEmpty)
        try Migrator(connection: connection).verifyCurrent()
        let count = try connection.query("SELECT count(*) AS c FROM schema_migration")[0]
        #expect(try count.decode("c", as: Int.self) == Migration.embedded.count)
    }

    @Test func anEditedAppliedMigrationStopsWithItsName() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "migedit"))
        let original = [Migration(name: "0001_a.sql", sql: "CREATE TABLE a (x int);")]
        try Migrator(connection: connection, migrations: original).migrate()
        let edited = [Migration(name: "0001_a.sql", sql: "CREATE TABLE a (x bigint);")]
        let error = #expect(throws: ReconcilerError.self) {
            try Migrator(connection: connection, migrations: edited).migrate()
        }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("0001_a.sql") == true)
        #expect(error?.exitCode != 0)
    }

    @Test func aFailingMigrationLeavesNothingBehind() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "migfail"))
        let migrations = [
            Migration(name: "0001_ok.sql", sql: "CREATE TABLE ok (x int);"),
            Migration(name: "0002_bad.sql", sql: "CREATE TABLE half (x int); SELECT * FROM missing_table;"),
        ]
        let error = #expect(throws: ReconcilerError.self) {
            try Migrator(connection: connection, migrations: migrations).migrate()
        }
        #expect(error?.message.contains("0002_bad.sql") == true)
        let half = try connection.query("SELECT to_regclass('half') IS NULL AS gone")[0]
        #expect(try half.decode("gone", as: Bool.self))
        let names = try connection.query("SELECT name FROM schema_migration").map {
            try $0.decode("name", as: String.self)
        }
        #expect(names == ["0001_ok.sql"])
    }

    /// A migration that meets a lock timeout (a running job holds the table) rolled back whole: `migrate` exits 75,
    /// run it again, rather than 1.
    @Test func aMigrationThatMayPassWhenRunAgainStaysRetryableAndNamesTheFile() throws {
        let conninfo = try TestDatabase.create(prefix: "migretry")
        let connection = try PostgresConnection(conninfo: conninfo)
        let holder = try PostgresConnection(conninfo: conninfo)
        defer { holder.close() }
        try connection.execute("CREATE TABLE busy (x int)")
        try holder.execute("BEGIN")
        try holder.execute("LOCK TABLE busy IN ACCESS EXCLUSIVE MODE")
        let migrations = [
            Migration(name: "0001_busy.sql", sql: "SET lock_timeout = '50ms'; ALTER TABLE busy ADD COLUMN y int;")
        ]
        let error = #expect(throws: PostgresError.self) {
            try Migrator(connection: connection, migrations: migrations).migrate()
        }
        #expect(error?.sqlState == "55P03" && error?.isRetryable == true, "\(String(describing: error))")
        #expect(error?.message.contains("0001_busy.sql") == true)
        #expect(ExitStatus.classify(try #require(error)).code == ExitStatus.temporary)
        try holder.execute("ROLLBACK")
        #expect(try Migrator(connection: connection, migrations: migrations).migrate() == ["0001_busy.sql"])
    }

    @Test func pendingMigrationsFailTheCurrentCheck() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "migpend"))
        #expect(throws: ReconcilerError.self) { try Migrator(connection: connection).verifyCurrent() }
    }

    /// 0029 dates a Google partial refund read from its order alone at its createTime (its part key), as a voided
    /// row's part is: one written at its processTime (3 days later, across a month's end) moves back to October;
    /// a voided part and an order's whole refund keep their times.
    @Test func partialRefundsFromTheOrderAreRedatedWhenTheyWereMade() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "mig29"))
        let before = Migration.embedded.filter { $0.name < "0029" }
        try Migrator(connection: connection, migrations: before).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.x')")
        // Oct 30 2026 10:00:00.250 UTC, processed Nov 2.
        let created: Int64 = 1_793_354_400_250
        for (order, part, at) in [
            ("GPA.1", "orders:partial:\(created)", "2026-11-02T10:00:00Z"),
            ("GPA.2", "1793354400000:2", "2026-10-30T10:00:00Z"),
            ("GPA.3", "orders:refund", "2026-11-02T10:00:00Z"),
        ] {
            try connection.execute(
                """
                INSERT INTO refund (app_id, platform, order_id, part_key, refunded_at, refund_type, quantity, payload)
                VALUES ('droid', 'google', $1, $2, $3::timestamptz, 'partial_amount', 1, '{}')
                """, [order, part, at])
        }
        let only29 = Migration.embedded.filter { $0.name < "0030" }
        #expect(
            try Migrator(connection: connection, migrations: only29).migrate() == [
                "0029_google_partial_refunds_dated_when_made.sql"
            ])
        let rows = try connection.query(
            """
            SELECT order_id, to_char(refunded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS at
            FROM refund ORDER BY order_id
            """)
        let dates = try rows.map {
            "\(try $0.decode("order_id", as: String.self)) \(try $0.decode("at", as: String.self))"
        }
        #expect(
            dates == [
                "GPA.1 2026-10-30T10:00:00.250", "GPA.2 2026-10-30T10:00:00.000", "GPA.3 2026-11-02T10:00:00.000",
            ])
    }

    /// The binary embeds `sql/` at build time; this proves the embedded copy is byte-for-byte the folder.
    @Test func embeddedMigrationsEqualTheSQLFolder() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("sql")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        #expect(names == Migration.embedded.map(\.name))
        for migration in Migration.embedded {
            let onDisk = try String(contentsOf: folder.appendingPathComponent(migration.name), encoding: .utf8)
            #expect(onDisk == migration.sql, "\(migration.name) differs from the embedded copy")
        }
    }
}
