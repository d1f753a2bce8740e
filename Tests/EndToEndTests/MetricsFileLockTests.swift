import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

extension UnitExitCodeTests {
    /// Runs that end together (the nightly run, a refund-requests run) each read, merge and replace the metrics file
    /// under `<file>.lock`: one that finds the lock held waits, writing nothing, until it is free. Without it the
    /// later rename would bring back the file as it was before the other run's series.
    @Test func aRunWritesTheMetricsFileOnlyUnderItsLock() async throws {
        try await StoreSimulator.withRunning(NightlyRunTests.options()) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "unitlock", extraYAML: NightlyRunTests.extra)
            let path = stores.directory.appendingPathComponent("locked.prom").path
            let lock = open(path + ".lock", O_RDWR | O_CREAT, 0o644)
            try #require(lock >= 0)
            defer { close(lock) }
            try #require(flock(lock, LOCK_EX) == 0)
            let (process, out, err) = try BuiltExecutable("storerecon").start(
                ["sync", "google-voided", "--config", stores.configPath, "--metrics-file", path])
            defer {
                try? FileManager.default.removeItem(at: out)
                try? FileManager.default.removeItem(at: err)
            }
            // Until the run waits for the lock (its pid among /proc/locks' waiters), or ends.
            while process.isRunning, !Self.waitsForAFileLock(process.processIdentifier) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(process.isRunning, "the run ended without waiting for the lock")
            #expect(!FileManager.default.fileExists(atPath: path))
            flock(lock, LOCK_UN)
            await BuiltExecutable.waitForExit(process)
            #expect(process.terminationStatus == 0)
            #expect(try Self.metrics(path, command: "sync google-voided").code == "0")
        }
    }

    /// A job skipped because another process holds its lock did not run: the series that process (or the last run)
    /// wrote for it stay, a failure among them too, so a per-job alert does not clear on a run that did nothing.
    @Test func aJobSkippedForItsLockKeepsItsSeries() async throws {
        try await StoreSimulator.withRunning(NightlyRunTests.options()) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "unitskipped", extraYAML: NightlyRunTests.extra)
            let app = stores.app(.google).id
            let path = stores.directory.appendingPathComponent("skipped.prom").path
            let failed = "storerecon_job_exit_code{job=\"google_voided\",app=\"\(app)\"} 1"
            let rows = "storerecon_job_rows{job=\"google_voided\",app=\"\(app)\",kind=\"inserted\"} 12"
            try "\(failed)\n\(rows)\n".write(toFile: path, atomically: true, encoding: .utf8)
            let holder = try PostgresConnection(conninfo: stores.conninfo)
            defer { holder.close() }
            try #require(try holder.tryAdvisoryLock(JobLock.key(job: "google_voided", app: app)))
            let run = try await BuiltExecutable("storerecon").run(
                ["sync", "google-voided", "--app", app, "--config", stores.configPath, "--metrics-file", path])
            #expect(run.status == 0, "\(run.stderr)")
            let prom = try String(contentsOfFile: path, encoding: .utf8)
            #expect(prom.contains(failed + "\n") && prom.contains(rows + "\n"), "\(prom)")
            #expect(prom.contains("storerecon_run_exit_code{command=\"sync google-voided\"} 0"))
        }
    }

    /// Whether `pid` waits for a file lock: `/proc/locks` lists each waiter as `N: -> FLOCK ADVISORY WRITE pid ...`.
    static func waitsForAFileLock(_ pid: Int32) -> Bool {
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        return locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.contains("->") && fields.contains(Substring(String(pid)))
        }
    }
}
