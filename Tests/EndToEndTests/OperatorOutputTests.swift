import Foundation
import Postgres
import TestSupport
import Testing

/// What storerecon tells its operator, checked on the built binary as cron and systemd run it: the database
/// password never shows, database settings errors exit 78 (not 75, which the units treat as "continue later"),
/// durations and dates are strict, the metrics file is written 0644 however the run ends, JSON times are RFC 3339.
@Suite("storerecon tells its operator the truth, safely")
struct OperatorOutputTests {
    static let password = "S3cretPW-e2e"
    let workspace: CommandWorkspace
    var conninfo: String { workspace.conninfo }
    var directory: URL { workspace.directory }
    var storerecon: BuiltExecutable { workspace.storerecon }

    init() throws { workspace = try CommandWorkspace(prefix: "ops") }

    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> BuiltExecutable.Outcome {
        try workspace.run(arguments, environment: environment)
    }

    /// The shipped files in `cron/`.
    static func shipped(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("cron").appendingPathComponent(name), encoding: .utf8)
    }

    /// The Runbook's install steps create every directory a shipped unit writes to (a missing `ReadWritePaths=`
    /// fails the unit at start) and enable every shipped timer.
    @Test func theRunbookPreparesWhatTheUnitsNeed() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let runbook = try String(contentsOf: root.appendingPathComponent("Runbook.md"), encoding: .utf8)
        let files = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("cron").path)
        for unit in files where unit.hasSuffix(".service") {
            for line in try Self.shipped(unit).split(separator: "\n") where line.hasPrefix("ReadWritePaths=") {
                for path in line.dropFirst("ReadWritePaths=".count).split(separator: " ") {
                    #expect(
                        runbook.range(of: "install -d [^\n]*\(path)", options: .regularExpression) != nil,
                        "\(unit) writes to \(path), which the Runbook never creates")
                }
            }
        }
        let enable = try #require(runbook.split(separator: "\n").first { $0.contains("systemctl enable") })
        for timer in files where timer.hasSuffix(".timer") {
            #expect(enable.contains(timer), "the Runbook does not enable \(timer)")
        }
    }

    /// Runs storerecon from a shell with the `UMask=` of the shipped nightly unit (0077).
    func runUnderUmask0077(_ arguments: [String], environment: [String: String] = [:]) throws -> Int32 {
        let unit = try Self.shipped("storerecon-nightly.service")
        let umask = try #require(
            unit.split(separator: "\n").first { $0.hasPrefix("UMask=") }.map { $0.dropFirst("UMask=".count) })
        #expect(umask == "0077")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments =
            ["-c", "umask \(umask); exec \"$0\" \"$@\" 2>/dev/null", storerecon.url.path] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = directory
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static let malformedURLs = [
        "postgresql://postgres:\(password)@[::1:bad/x",
        "postgresql://postgres:\(password)@[::1/x",
        "postgresql://postgres:\(password)@host/db?bogus=1",
        "postgresql://postgres:\(password)@host/db%zz",
        "postgresql://postgres:\(password)@host:99999999/db",
        "postgresql://postgres@host/db?password=\(password)&sslmode=bogus",
        "host=/tmp password=\(password) hostx=1",
        "host=/tmp password='\(password)' sslmode=bogus",
        "password=\(password) host=/tmp unterminated='abc",
    ]

    @Test(arguments: malformedURLs)
    func aMalformedDatabaseURLExits78AndNeverShowsThePassword(_ url: String) throws {
        let metrics = directory.appendingPathComponent("m.prom").path
        for format in ["text", "json"] {
            for arguments in [["run", "nightly", "--metrics-file", metrics], ["status"], ["sync", "google-voided"]] {
                let outcome = try run(
                    arguments + ["--log-format", format], environment: ["STORERECON_DATABASE_URL": url])
                #expect(outcome.status == 78, "\(arguments) \(format): \(outcome.stderr)")
                #expect(outcome.stderr.contains("database.url"), "\(outcome.stderr)")
                for text in [outcome.stdout, outcome.stderr] {
                    #expect(!text.contains(Self.password), "\(arguments) \(format): \(text)")
                }
                #expect(outcome.stderr.split(separator: "\n").count == 1, "one line: \(outcome.stderr)")
            }
        }
        let prom = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prom.contains("storerecon_run_exit_code{command=\"run nightly\"} 78"))
        #expect(!prom.contains(Self.password))
    }

    @Test func databaseSettingsTyposExit78AndOnlyAnUnreachableServerExits75() throws {
        let (host, port) = try TestDatabase.server()
        let base = "host=\(host) port=\(port) user=postgres"
        let typos = [
            "\(base) dbname=postgres hostx=\(host)",
            "\(base) dbname=postgres sslmode=bogus",
            "postgresql:///postgres?host=\(host)&port=\(port)&colour=blue",
            "host=\(host) port=99999999 dbname=postgres",
            "\(base) dbname=storerecon_missing_\(UInt32.random(in: 0...99999))",
            "host=\(host) port=\(port) user=no_such_role_\(UInt32.random(in: 0...99999)) dbname=postgres",
            "postgresql://postgres@[::1:bad/x",
        ]
        for url in typos {
            let outcome = try run(["run", "nightly"], environment: ["STORERECON_DATABASE_URL": url])
            #expect(outcome.status == 78, "\(url): \(outcome.stderr)")
        }
        let down = try run(
            ["run", "nightly"],
            environment: ["STORERECON_DATABASE_URL": "host=/nonexistent-\(UUID().uuidString) port=1 connect_timeout=2"]
        )
        #expect(down.status == 75, "\(down.stderr)")
    }

    @Test func durationsOnTheCommandLineExit64WithOneLine() throws {
        #expect(try run(["migrate"]).status == 0)
        for (value, reason) in [
            ("3x", "such as 90s"), ("72H", "such as 90s"), ("72", "no unit"), ("99999d", "out of range"),
        ] {
            let outcome = try run(["recheck", "--lead", value])
            #expect(outcome.status == 64, "--lead \(value): \(outcome.stderr)")
            #expect(outcome.stderr.contains("--lead \(value): "), "\(outcome.stderr)")
            #expect(outcome.stderr.contains(reason), "\(outcome.stderr)")
            #expect(outcome.stderr.split(separator: "\n").count == 1, "\(outcome.stderr)")
        }
        try "database:\n  url: \"\(conninfo)\"\nrecheck: { lead: 72 }\n"
            .write(to: directory.appendingPathComponent("bare.yaml"), atomically: true, encoding: .utf8)
        let bare = try run(["recheck", "--config", "bare.yaml"])
        #expect(bare.status == 78, "\(bare.stderr)")
        #expect(bare.stderr.contains("recheck.lead: a bare number has no unit"), "\(bare.stderr)")
    }

    @Test func usageErrorsExit64OnOneLineAndFileErrorsSayWhy() throws {
        #expect(try run(["migrate"]).status == 0)
        let report = ["report", "refunds"]
        for (arguments, reason) in [
            (
                ["--from", "2026-02-30", "--to", "2026-03-01"],
                "--from 2026-02-30: no such day (February 2026 has 28 days)"
            ),
            (["--from", "2026-03-02", "--to", "2026-03-01"], "--from 2026-03-02 is after --to 2026-03-01"),
            (["--from", "2026-3-1", "--to", "2026-03-01"], "--from: expected a date as YYYY-MM-DD"),
            (
                ["--from", "2026-03-01", "--to", "2026-03-01", "--by", "day,colour"],
                "--by: unknown column \\\"colour\\\""
            ),
            (["--from", "2026-03-01", "--to", "2026-03-01", "--detail", "--by", "app"], "cannot be grouped with --by"),
        ] {
            let outcome = try run(report + arguments)
            #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains(reason), "\(outcome.stderr)")
            #expect(outcome.stderr.split(separator: "\n").count == 1, "\(outcome.stderr)")
        }
        let unwritable = try run(
            report + ["--from", "2026-03-01", "--to", "2026-03-01", "--output", "/nonexistent-dir/r.html"])
        #expect(unwritable.status == 1)
        #expect(unwritable.stderr.contains("--output /nonexistent-dir/r.html: cannot write the report ("))
        #expect(!unwritable.stderr.contains("Error Domain"), "\(unwritable.stderr)")
        #expect(unwritable.stderr.split(separator: "\n").count == 1, "\(unwritable.stderr)")

        let missing = try storerecon.run(["status"], directory: FileManager.default.temporaryDirectory)
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("no configuration file there; looked at "), "\(missing.stderr)")
        #expect(missing.stderr.contains("--config FILE or STORERECON_CONFIG=FILE"))
    }

    @Test func theMetricsFileIsWritten0644UnderUmask0077HoweverTheRunEnds() throws {
        let metrics = directory.appendingPathComponent("storerecon.prom").path
        // Another app's series from an earlier run, which this run for demo-android must keep.
        try """
        # TYPE storerecon_job_exit_code gauge
        storerecon_job_exit_code{job="apple_refunds",app="other-ios"} 0
        storerecon_job_last_success_timestamp_seconds{job="apple_refunds",app="other-ios"} 1700000000
        storerecon_run_exit_code{command="sync google-voided"} 0

        """.write(toFile: metrics, atomically: true, encoding: .utf8)

        // An empty database (schema not applied): exit 1, and the file says so.
        let empty = try runUnderUmask0077(["run", "nightly", "--app", "demo-android", "--metrics-file", metrics])
        #expect(empty == 1)
        var prom = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prom.contains("storerecon_run_exit_code{command=\"run nightly\"} 1"), "\(prom)")
        #expect(prom.contains("storerecon_run_finished_timestamp_seconds{command=\"run nightly\"} "))
        #expect(prom.contains("storerecon_job_exit_code{job=\"apple_refunds\",app=\"other-ios\"} 0"))
        #expect(prom.contains("storerecon_run_exit_code{command=\"sync google-voided\"} 0"))
        let mode = try FileManager.default.attributesOfItem(atPath: metrics)[.posixPermissions] as? Int
        #expect(mode == 0o644, "mode \(String(mode ?? 0, radix: 8))")
        if getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            // Read it as another user (nobody), as node_exporter does.
            let reader = Process()
            reader.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            reader.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "cat", metrics]
            reader.standardOutput = FileHandle.nullDevice
            try reader.run()
            reader.waitUntilExit()
            #expect(reader.terminationStatus == 0, "another user cannot read the metrics file")
        }

        // The database unreachable: exit 75, the file replaced (still 0644), the earlier last-success kept.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: metrics)
        let down = try runUnderUmask0077(
            ["run", "nightly", "--metrics-file", metrics],
            environment: ["STORERECON_DATABASE_URL": "host=/nonexistent-\(UUID().uuidString) port=1"])
        #expect(down == 75)
        prom = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prom.contains("storerecon_run_exit_code{command=\"run nightly\"} 75"), "\(prom)")
        #expect(prom.contains("app=\"other-ios\"} 1700000000"))
        #expect(try FileManager.default.attributesOfItem(atPath: metrics)[.posixPermissions] as? Int == 0o644)

        // A configuration error (before anything is known): exit 78, still written.
        let typo = try runUnderUmask0077(
            ["run", "nightly", "--metrics-file", metrics, "--config", "nonexistent.yaml"])
        #expect(typo == 78)
        prom = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prom.contains("storerecon_run_exit_code{command=\"run nightly\"} 78"), "\(prom)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".tmp")
        }
        #expect(leftovers.isEmpty)
    }

    @Test func theShippedScheduleStopsHungRunsAndLeavesNothingInTmp() throws {
        let crontab = try Self.shipped("crontab")
        #expect(!crontab.split(separator: "\n").contains { !$0.hasPrefix("#") && $0.contains("/tmp/") })
        let services = ["storerecon-nightly.service", "storerecon-google-hourly.service", "storerecon-status.service"]
        for name in services {
            let unit = try Self.shipped(name)
            let lines = unit.split(separator: "\n").filter { !$0.hasPrefix("#") }
            if lines.contains(where: { $0.hasPrefix("After=") && $0.contains("network-online.target") }) {
                #expect(lines.contains { $0.hasPrefix("Wants=") && $0.contains("network-online.target") }, "\(name)")
            }
            for failure in lines.filter({ $0.hasPrefix("OnFailure=") }) {
                let target = failure.dropFirst("OnFailure=".count).replacingOccurrences(of: "%n", with: "")
                #expect((try? Self.shipped(String(target))) != nil, "\(name): \(failure) names a unit not shipped")
            }
            #expect(lines.contains("UMask=0077") || name == "storerecon-status.service", "\(name)")
        }
        let nightly = try Self.shipped("storerecon-nightly.service")
        #expect(nightly.contains("\nTimeoutStartSec="), "a hung nightly run must be stopped before the next night")
        #expect(nightly.contains("\nSuccessExitStatus=75\n"))
    }
}
