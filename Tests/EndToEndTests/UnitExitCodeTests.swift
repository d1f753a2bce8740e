import Foundation
import StoreSimulator
import TestSupport
import Testing

/// The exit code the shipped systemd units see (`UMask=0077`, `SuccessExitStatus=75`) for the failure classes that
/// need a store: a spent daily quota and a stop signal each exit 75 ("continue later"), and the metrics file, written
/// 0644 however the run ends, says so. (A configuration typo and a database that is down are in
/// `OperatorOutputTests`.)
@Suite("the exit codes the shipped units see", .serialized)
struct UnitExitCodeTests {
    /// Starts storerecon from a shell with the nightly unit's umask.
    static func startUnderUmask0077(_ arguments: [String]) throws -> Process {
        let binary = try BuiltExecutable("storerecon")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask 0077; exec \"$0\" \"$@\" 2>/dev/null", binary.url.path] + arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The metrics file's run exit code for `command` and its mode.
    static func metrics(_ path: String, command: String) throws -> (code: String?, mode: Int?) {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let prefix = "storerecon_run_exit_code{command=\"\(command)\"} "
        let code = text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        return (code, mode)
    }

    @Test func aSpentDailyQuotaExits75AndTheMetricsFileSaysSo() async throws {
        var options = NightlyRunTests.options()
        options.faults[.googleVoidedPurchases] = FaultSettings(rates: [.dailyLimit: 1])
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "unitquota", extraYAML: NightlyRunTests.extra)
            let path = stores.directory.appendingPathComponent("quota.prom").path
            let process = try Self.startUnderUmask0077(
                ["sync", "google-voided", "--config", stores.configPath, "--metrics-file", path])
            await BuiltExecutable.waitForExit(process)
            #expect(process.terminationStatus == 75)
            let written = try Self.metrics(path, command: "sync google-voided")
            #expect(written.code == "75")
            #expect(written.mode == 0o644)
        }
    }

    @Test func aStopSignalExits75AndTheMetricsFileSaysSo() async throws {
        var options = NightlyRunTests.options()
        // Every answer takes 1.5 s, as the real stores' do: the run is still calling when the signal comes.
        options.latency = Latency(millis: 1500)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "unitsignal", extraYAML: NightlyRunTests.extra)
            let path = stores.directory.appendingPathComponent("signal.prom").path
            let process = try Self.startUnderUmask0077(
                ["run", "nightly", "--config", stores.configPath, "--metrics-file", path])
            _ = try await NightlyRunTests.waitForAJob(stores.conninfo, process: process)
            #expect(process.isRunning, "the run ended before the signal")
            kill(process.processIdentifier, SIGTERM)
            await BuiltExecutable.waitForExit(process)
            #expect(process.terminationStatus == 75)
            let written = try Self.metrics(path, command: "run nightly")
            #expect(written.code == "75")
            #expect(written.mode == 0o644)
        }
    }
}
