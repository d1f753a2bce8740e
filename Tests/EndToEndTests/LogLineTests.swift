import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// Every line storerecon writes to stderr over whole nightly runs against the simulator with every fault switched
/// on (so errors, retries and refusals are logged too) parses as one logfmt or JSON object, and no output holds the
/// configured database password.
@Suite("log lines: one parseable event per line", .serialized)
struct LogLineTests {
    /// A logfmt line as key/value pairs, or nil when it is not valid logfmt (bare keys are not used by storerecon).
    static func parseLogfmt(_ line: Substring) -> [String: String]? {
        var pairs: [String: String] = [:]
        var index = line.startIndex
        while index < line.endIndex {
            while index < line.endIndex, line[index] == " " { index = line.index(after: index) }
            if index == line.endIndex { break }
            var key = ""
            while index < line.endIndex, line[index] != "=", line[index] != " ", line[index] != "\"" {
                key.append(line[index])
                index = line.index(after: index)
            }
            guard !key.isEmpty, index < line.endIndex, line[index] == "=" else { return nil }
            index = line.index(after: index)
            var value = ""
            if index < line.endIndex, line[index] == "\"" {
                index = line.index(after: index)
                var closed = false
                while index < line.endIndex {
                    let character = line[index]
                    index = line.index(after: index)
                    if character == "\"" {
                        closed = true
                        break
                    }
                    if character == "\\" {
                        guard index < line.endIndex else { return nil }
                        value.append(line[index])
                        index = line.index(after: index)
                    } else {
                        value.append(character)
                    }
                }
                guard closed else { return nil }
                guard index == line.endIndex || line[index] == " " else { return nil }
            } else {
                while index < line.endIndex, line[index] != " " {
                    guard line[index] != "\"", line[index] != "=" else { return nil }
                    value.append(line[index])
                    index = line.index(after: index)
                }
            }
            guard pairs[key] == nil else { return nil }
            pairs[key] = value
        }
        return pairs
    }

    /// On a terminal each event first clears the progress lines (carriage return, erase to the end of the screen:
    /// one line per running app, none here), so it starts at the left edge on a line of its own; piped to a file, no
    /// escape is written. The terminal is a pty from `script`.
    @Test func onATerminalEachEventClearsTheProgressLineFirst() throws {
        let conninfo = try TestDatabase.create(prefix: "tty")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("storerecon.yaml")
        try """
        database:
          url: "\(conninfo)"
        apps:
          - { id: demo-android, platform: google, packageName: com.example.demo, serviceAccountFile: /nonexistent.json }
        """.write(to: config, atomically: true, encoding: .utf8)
        let binary = try BuiltExecutable("storerecon")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "'\(binary.url.path)' migrate --config '\(config.path)'", "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\r\u{1B}[Jtime="), "\(text.debugDescription)")
        let piped = try binary.run(["migrate", "--config", config.path])
        #expect(piped.stderr.contains("time=") && !piped.stderr.contains("\u{1B}"), "\(piped.stderr)")
    }

    @Test func theLogfmtParserRejectsWhatTheOldFormatWrote() {
        #expect(Self.parseLogfmt("2026-11-22T04:00:00Z info job=x 12 rows stored") == nil)
        #expect(Self.parseLogfmt("time=t level=info msg=\"a \\\"b\\\" c\"")?["msg"] == "a \"b\" c")
    }

    @Test func aNightlyRunUnderFaultsLogsOneParseableEventPerLine() async throws {
        var options = NightlyRunTests.options()
        options.scenario.subscriptions = 1500
        options.scenario.refunds = 200
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "loglines", extraYAML: NightlyRunTests.extra)
            let role = try SecretsTests.PasswordRole(admin: stores.conninfo)
            defer { role.drop() }
            let environment = ["STORERECON_DATABASE_URL": role.conninfo(stores.conninfo)]
            let binary = try BuiltExecutable("storerecon")
            let metrics = stores.directory.appendingPathComponent("m.prom").path
            var outputs: [String] = []
            var events = 0
            var levels: Set<String> = []
            for format in ["text", "json"] {
                for endpoint in SimulatorEndpoint.allCases {
                    simulator.setFaults(
                        FaultSettings(rates: Dictionary(uniqueKeysWithValues: FaultKind.allCases.map { ($0, 0.05) })),
                        for: endpoint)
                }
                let faulty = try await binary.run(
                    [
                        "run", "nightly", "--config", stores.configPath, "--log-format", format, "--log-level", "debug",
                        "--metrics-file", metrics,
                    ],
                    environment: environment)
                #expect([0, 1, 75].contains(faulty.status), "\(faulty.stderr.suffix(1500))")
                simulator.clearFaults()
                let status = try await binary.run(
                    ["status", "--config", stores.configPath, "--format", "json", "--log-format", format],
                    environment: environment)
                outputs += [faulty.stdout, faulty.stderr, status.stdout, status.stderr]
                outputs.append(try String(contentsOfFile: metrics, encoding: .utf8))
                for line in (faulty.stderr + status.stderr).split(separator: "\n", omittingEmptySubsequences: false)
                    .dropLast()
                {
                    events += 1
                    if format == "json" {
                        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                        #expect(object?["time"] is String && object?["level"] is String, "not one JSON event: \(line)")
                        if let level = object?["level"] as? String { levels.insert(level) }
                    } else {
                        let pairs = Self.parseLogfmt(line)
                        #expect(pairs?["time"] != nil && pairs?["msg"] != nil, "not one logfmt event: \(line)")
                        if let level = pairs?["level"] { levels.insert(level) }
                    }
                }
            }
            #expect(events > 20, "the runs logged enough to check")
            #expect(levels.contains("warning") || levels.contains("error"), "the faults were logged: \(levels)")
            outputs.append(try SecretsTests().databaseText(stores))
            let haystack = outputs.joined(separator: "\n")
            #expect(!haystack.contains(role.password))
        }
    }
}
