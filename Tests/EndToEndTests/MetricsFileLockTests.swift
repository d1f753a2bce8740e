import Foundation
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

    /// Whether `pid` waits for a file lock: `/proc/locks` lists each waiter as `N: -> FLOCK ADVISORY WRITE pid ...`.
    static func waitsForAFileLock(_ pid: Int32) -> Bool {
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        return locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.contains("->") && fields.contains(Substring(String(pid)))
        }
    }
}
