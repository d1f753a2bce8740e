import Foundation
import Postgres
import TestSupport
import Testing

/// Runs the built `storerecon` binary as cron would and checks exit codes, output and the database.
@Suite("storerecon binary: migrate, import, status")
struct CommandLineTests {
    let workspace: CommandWorkspace
    var conninfo: String { workspace.conninfo }
    var directory: URL { workspace.directory }
    var storerecon: BuiltExecutable { workspace.storerecon }

    init() throws { workspace = try CommandWorkspace(prefix: "cli") }

    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> BuiltExecutable.Outcome {
        try workspace.run(arguments, environment: environment)
    }

    /// Each command's help lists only the options it honours: --dry-run and --metrics-file on the commands that
    /// call the stores, a --dry-run of their own on import and migrate, neither on status or report; the top level
    /// names the global options.
    @Test func eachCommandsHelpListsOnlyWhatItHonours() throws {
        func help(_ arguments: [String]) throws -> String {
            let outcome = try run(["help"] + arguments)
            #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
            return outcome.stdout
        }
        for command in [["run", "nightly"], ["sync", "google-voided"], ["backfill", "apple-refunds"], ["recheck"]] {
            let text = try help(command)
            #expect(text.contains("--dry-run") && text.contains("--metrics-file"), "\(command): \(text)")
            #expect(text.contains("--config") && text.contains("--log-format"), "\(command): \(text)")
        }
        for command in [["status"], ["report", "refunds"], ["quarantine", "list"]] {
            let text = try help(command)
            #expect(!text.contains("--dry-run") && !text.contains("--metrics-file"), "\(command): \(text)")
        }
        #expect(try help(["import", "subscriptions"]).contains("Read and check the file"))
        #expect(try help(["migrate"]).contains("List the migrations that would be applied"))
        #expect(!(try help(["migrate"]).contains("--metrics-file")))
        let top = try help([])
        for option in ["--config", "--log-format", "--log-level", "--quiet", "--dry-run", "--metrics-file"] {
            #expect(top.contains(option), "\(option) missing from the top-level help")
        }
    }

    @Test func migrateTwiceThenStatus() throws {
        let first = try run(["migrate"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("applied 0001_init.sql"))
        let second = try run(["migrate"])
        #expect(second.status == 0)
        #expect(second.stderr.contains("nothing to apply"))
        let status = try run(["status", "--format", "json"])
        #expect(status.status == 0, "\(status.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(json?["schemaCurrent"] as? Bool == true)
        let apps = json?["apps"] as? [[String: Any]]
        #expect(apps?.first?["id"] as? String == "demo-android")
    }

    /// A store's block (a throttle, the store's "per day" answer) is shown by `status` with its API, end and reason,
    /// and `quota clear` lifts both (issue 27).
    @Test func statusShowsEveryBlockAndQuotaClearLiftsIt() throws {
        #expect(try run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try connection.executeScript(
            """
            INSERT INTO quota_bucket (app_id, api, blocked_until, blocked_reason)
            VALUES ('demo-android', 'google.voidedpurchases', clock_timestamp() + interval '2 minutes',
                    'throttled: Retry-After 120s');
            INSERT INTO quota_day (app_id, api, pacific_day, exhausted_at)
            VALUES ('demo-android', 'google.orders', quota_pacific_day(clock_timestamp()), clock_timestamp())
            """)
        let status = try run(["status"])
        #expect(status.stdout.contains("BLOCKED google.voidedpurchases until "), "\(status.stdout)")
        #expect(status.stdout.contains(": throttled: Retry-After 120s (lift: storerecon quota clear"))
        #expect(status.stdout.contains("BLOCKED google.orders until "))
        #expect(status.stdout.contains("the store said the daily quota is spent"))
        let json = try run(["status", "--format", "json"])
        #expect(json.stdout.contains("\"kind\" : \"store_exhausted\""), "\(json.stdout)")

        let unknown = try run(["quota", "clear", "--app", "demo-android", "--api", "google.nosuch"])
        #expect(unknown.status == 64, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("google.voidedpurchases"), "the known APIs are listed: \(unknown.stderr)")
        let throttle = try run(["quota", "clear", "--app", "demo-android", "--api", "google.voidedpurchases"])
        #expect(throttle.status == 0, "\(throttle.stderr)")
        #expect(throttle.stdout.contains("lifted google.voidedpurchases block until"), "\(throttle.stdout)")
        let day = try run(["quota", "clear", "--app", "demo-android", "--api", "google.orders"])
        #expect(day.stdout.contains("lifted google.orders 'daily quota spent' mark of Pacific day"), "\(day.stdout)")
        let nothing = try run(["quota", "clear", "--app", "demo-android", "--api", "google.orders"])
        #expect(nothing.stdout.contains("no store block to lift"))
        #expect(!(try run(["status"]).stdout.contains("BLOCKED")))
    }

    /// A production Apple app's sandbox fallback buckets (`apple.<api>.sandbox`) are blocked by a sandbox throttle and
    /// listed by `status`, so `quota clear` takes their names too.
    @Test func quotaClearLiftsAnAppleSandboxFallbackBlock() throws {
        try """
        database:
          url: "\(conninfo)"
        apps:
          - { id: demo-ios, platform: apple, bundleId: com.example.demo, appAppleId: 1, issuerId: i, keyId: k,
              privateKeyFile: /nonexistent.p8, rootCertificates: [/nonexistent.cer] }
        """.write(to: directory.appendingPathComponent("ios.yaml"), atomically: true, encoding: .utf8)
        #expect(try run(["migrate", "--config", "ios.yaml"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try connection.execute(
            """
            INSERT INTO quota_bucket (app_id, api, blocked_until, blocked_reason)
            VALUES ('demo-ios', 'apple.refundhistory.sandbox', clock_timestamp() + interval '2 minutes',
                    'throttled: 429')
            """)
        let status = try run(["status", "--config", "ios.yaml"])
        #expect(status.stdout.contains("BLOCKED apple.refundhistory.sandbox until "), "\(status.stdout)")
        let cleared = try run(
            ["quota", "clear", "--config", "ios.yaml", "--app", "demo-ios", "--api", "apple.refundhistory.sandbox"])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(cleared.stdout.contains("lifted apple.refundhistory.sandbox block until"), "\(cleared.stdout)")
        #expect(!(try run(["status", "--config", "ios.yaml"]).stdout.contains("BLOCKED")))
        let google = try run(["quota", "clear", "--app", "demo-android", "--api", "google.orders.sandbox"])
        #expect(google.status == 64, "a Google app has no sandbox buckets: \(google.stderr)")
    }

    /// `backfill` reads its times as `report` and `import` do, and every wrong command line exits 64 naming the option
    /// (issue 27), before any store or database is asked.
    @Test(arguments: [
        (["google-voided", "--since", "yesterday"], "yesterday\\\": expected an RFC 3339 time"),
        (["google-voided", "--since", "2026-02-30T00:00:00Z"], "2026-02-30T00:00:00Z\\\": no such date"),
        (["google-voided", "--since", "2026-11-01T00:00:00"], "no UTC offset; add Z or +hh:mm"),
        (
            ["google-voided", "--since", "2026-11-08T00:00:00Z", "--until", "2026-11-01T00:00:00Z"],
            "--until must be after --since"
        ),
        (["google-orders", "--since", "2026-13-01T00:00:00Z"], "2026-13-01T00:00:00Z\\\": expected"),
        (["google-voided", "--since", "2999-01-01T00:00:00Z"], "--since 2999-01-01T00:00:00Z is in the future"),
        (["google-orders", "--since", "2999-01-01T00:00:00Z"], "--since 2999-01-01T00:00:00Z is in the future"),
        (["apple-refunds"], "give exactly one of --all or --ids FILE"),
        (["apple-refunds", "--status", "--cancel"], "--status and --cancel go alone"),
    ])
    func backfillCommandLineErrorsExit64(arguments: [String], message: String) throws {
        let outcome = try run(["backfill"] + arguments)
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
    }

    /// `report refund-requests` names the option that is wrong.
    @Test func aRefundRequestsReportNamesItsWrongDay() throws {
        for (from, to, message) in [
            ("2026-13-01", "2026-12-01", "--from 2026-13-01: expected a day YYYY-MM-DD"),
            ("2026-12-01", "yesterday", "--to yesterday: expected a day YYYY-MM-DD"),
            ("2026-12-02", "2026-12-01", "--from 2026-12-02 is after --to 2026-12-01"),
        ] {
            let outcome = try run(["report", "refund-requests", "--from", from, "--to", to])
            #expect(outcome.status == 64, "\(outcome.stderr)")
            #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        }
        let environment = try run(
            ["report", "refund-requests", "--from", "2026-11-01", "--to", "2026-11-30", "--environment", "staging"])
        #expect(environment.status == 64, "\(environment.stderr)")
        #expect(environment.stderr.contains("--environment: expected one of production, sandbox, all"))
    }

    @Test func statusExitsOneWhenMigrationsArePending() throws {
        let status = try run(["status"])
        #expect(status.status == 1)
        #expect(status.stdout.contains("migrations pending"))
    }

    /// A job command on a database one migration behind (an upgrade before `migrate`) stops before it writes
    /// anything, saying what to run, rather than failing half-way on a missing column.
    @Test func aJobCommandStopsBeforeWritingWhenAMigrationIsPending() throws {
        #expect(try run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let last: String = try connection.query("SELECT max(name) AS name FROM schema_migration")[0].decode("name")
        try connection.execute("DELETE FROM schema_migration WHERE name = $1", [last])
        for arguments in [["sync", "google-voided"], ["recheck"]] {
            let outcome = try run(arguments)
            #expect(outcome.status == 1, "\(arguments): \(outcome.stderr)")
            #expect(
                outcome.stderr.contains("migrations pending: \(last); run `storerecon migrate`"), "\(outcome.stderr)")
        }
        let runs: Int = try connection.query("SELECT count(*)::int AS n FROM job_run")[0].decode("n")
        #expect(runs == 0, "no job started")
    }

    @Test func anEditedAppliedMigrationStopsMigrate() throws {
        #expect(try run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("UPDATE schema_migration SET checksum = 'edited' WHERE name = '0001_init.sql'")
        let again = try run(["migrate"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("0001_init.sql"))
        #expect(again.stderr.contains("edited"))
    }

    @Test func configurationErrorsExit78NamingTheKey() throws {
        try "apps:\n  - { id: x, platform: google, packageName: p, serviceAccountFile: /k, colour: blue }\n"
            .write(to: directory.appendingPathComponent("bad.yaml"), atomically: true, encoding: .utf8)
        let outcome = try run(["status", "--config", "bad.yaml"])
        #expect(outcome.status == 78)
        #expect(outcome.stderr.contains("apps[0].colour: unknown key"))
        let viaEnvironment = try run(["status"], environment: ["STORERECON_CONFIG": "bad.yaml"])
        #expect(viaEnvironment.status == 78)
    }

    @Test func importReportsBadLinesAndMergesNothing() throws {
        #expect(try run(["migrate"]).status == 0)
        let csv = directory.appendingPathComponent("subs.csv")
        try "app,store_id,product_id,expires_at\ndemo-android,t1,p,2026-12-01T00:00:00Z\nother,t2,p,\n"
            .write(to: csv, atomically: true, encoding: .utf8)
        let outcome = try run(["import", "subscriptions", "subs.csv"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("line 3"))
        #expect(outcome.stderr.contains("nothing merged"))
        let connection = try PostgresConnection(conninfo: conninfo)
        #expect(try connection.query("SELECT count(*) AS n FROM subscription")[0].decode("n", as: Int.self) == 0)
        // A dry run writes nothing, not even an app configured since the last migrate.
        try connection.execute("DELETE FROM app")
        let dry = try run(["import", "subscriptions", "subs.csv", "--skip-invalid", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stderr.contains("dry run: nothing written"), "\(dry.stderr)")
        #expect(try connection.query("SELECT count(*) AS n FROM app")[0].decode("n", as: Int.self) == 0)
        let skipping = try run(["import", "subscriptions", "subs.csv", "--skip-invalid", "--log-format", "json"])
        #expect(skipping.status == 0, "\(skipping.stderr)")
        #expect(try connection.query("SELECT count(*) AS n FROM subscription")[0].decode("n", as: Int.self) == 1)
        // JSON log lines parse, one event per line.
        for line in skipping.stderr.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "\(line)")
        }
        // A directory given for the file is named as such (it read as "The operation could not be completed").
        for command in ["subscriptions", "consumption"] {
            let folder = try run(["import", command, "."])
            #expect(folder.status == 1, "\(folder.stderr)")
            #expect(folder.stderr.contains(".: a directory, not a CSV file"), "\(folder.stderr)")
        }
    }

    /// Operator papercuts (issue 27): an unknown `--app` is a wrong command line (64), and a run that stopped early
    /// (75) but could not write its `--metrics-file` ends 1, the worse of the two.
    @Test func anUnknownAppIs64AndAnUnwritableMetricsFileOutranks75() throws {
        let unknown = try run(["status", "--app", "nosuch"])
        #expect(unknown.status == 64, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("--app nosuch: no such app"))
        // An app the command does not read is named too, not a run that does nothing and exits 0.
        for (arguments, reason) in [
            (["sync", "apple-refunds"], "its platform is google, and this command reads apple apps"),
            (["sync", "payouts"], "no earningsBucket configured"),
            (["run", "refund-requests"], "a Google app without rtdnSubscription"),
        ] {
            let other = try run(arguments + ["--app", "demo-android"])
            #expect(other.status == 64, "\(other.stderr)")
            #expect(other.stderr.contains("--app demo-android: \(reason)"), "\(other.stderr)")
        }
        let outcome = try run(
            ["sync", "google-voided", "--metrics-file", "/nonexistent-dir/storerecon.prom"],
            environment: ["STORERECON_DATABASE_URL": "host=/nonexistent-dir port=1 connect_timeout=2"])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("metrics"), "\(outcome.stderr)")
        // A metrics file that cannot be read is not rewritten without the other commands' series.
        let unreadable = directory.appendingPathComponent("unreadable.prom")
        try Data([0x73, 0xFF, 0xFE, 0x0A]).write(to: unreadable)
        #expect(try run(["migrate"]).status == 0)
        let merged = try run(["sync", "apple-refunds", "--metrics-file", unreadable.path])
        #expect(merged.status == 1, "\(merged.stderr)")
        #expect(try Data(contentsOf: unreadable) == Data([0x73, 0xFF, 0xFE, 0x0A]), "left as it was")
    }

    /// `quarantine retry --id N` and `drop --id N` with no open row of that id (a typo, a row already landed) say
    /// so and exit 1, rather than "0 landed".
    @Test func aQuarantineIdWithNoOpenRowIsAnError() throws {
        #expect(try run(["migrate"]).status == 0)
        for command in [["retry", "--id", "987"], ["drop", "--id", "987", "--reason", "typo"]] {
            let outcome = try run(["quarantine"] + command)
            #expect(outcome.status == 1, "\(command): \(outcome.stderr)")
            #expect(
                outcome.stderr.contains("quarantine #987: no open quarantined row has that id"), "\(outcome.stderr)")
        }
    }

    @Test func databaseDownIsExit75WithoutThePassword() throws {
        let outcome = try run(
            ["status"],
            environment: [
                "STORERECON_DATABASE_URL": "host=/nonexistent-dir port=1 password=SuperSecret77 connect_timeout=2"
            ])
        #expect(outcome.status == 75)
        #expect(outcome.stderr.contains("connect"))
        #expect(!outcome.stderr.contains("SuperSecret77"))
    }
}
