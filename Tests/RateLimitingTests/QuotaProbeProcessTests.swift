import Foundation
import Postgres
import RateLimiting
import Testing

/// Four separate `quota-probe` processes share one budget through PostgreSQL. In the serialized
/// `PostgresQuotaGate` suite, so no other rate measurement runs beside it.
extension PostgresQuotaGateTests {
    /// The `quota-probe` binary built beside the test bundle.
    static func probeExecutable() throws -> URL {
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates = [bundle.appendingPathComponent("quota-probe")]
        // On macOS the bundle is a directory: .build/debug/X.xctest/Contents/MacOS/X.
        candidates.append(
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("quota-probe"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw PostgresError(code: .usage, operation: "test setup", message: "quota-probe is not built")
        }
        return found
    }

    /// Runs the processes together and returns each one's standard output once all have exited.
    static func runTogether(_ arguments: [[String]]) async throws -> [(status: Int32, output: String)] {
        let executable = try probeExecutable()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quota-probe-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var processes: [(Process, URL)] = []
        for (index, argumentList) in arguments.enumerated() {
            let process = Process()
            process.executableURL = executable
            process.arguments = argumentList
            let output = folder.appendingPathComponent("\(index).out")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            processes.append((process, output))
        }
        let statuses = try await withThrowingTaskGroup(of: (Int, Int32).self) { group in
            for (index, (process, _)) in processes.enumerated() {
                let exited = AsyncStream<Int32>.makeStream()
                process.terminationHandler = { finished in
                    exited.continuation.yield(finished.terminationStatus)
                    exited.continuation.finish()
                }
                try process.run()
                group.addTask {
                    var status: Int32 = -1
                    for await value in exited.stream { status = value }
                    return (index, status)
                }
            }
            return try await group.reduce(into: [Int: Int32]()) { $0[$1.0] = $1.1 }
        }
        return try processes.enumerated().map { index, entry in
            (statuses[index] ?? -1, try String(contentsOf: entry.1, encoding: .utf8))
        }
    }

    /// 80 calls at 20 per 2 s from one process, then from four at once.
    @Test(arguments: [1, 4])
    func separateProcessesShareOneBudget(processes: Int) async throws {
        let conninfo = try Self.database("qprocs")
        let limit = RateLimit(20, per: .seconds(2))
        let calls = 80 / processes
        let arguments = (0..<processes).map { _ in
            [
                "--conninfo", conninfo, "--app", "a", "--api", Self.api.rawValue, "--calls", "\(calls)",
                "--limit", "20/2s",
            ]
        }
        let results = try await Self.runTogether(arguments)
        var grants: [Duration] = []
        var attempts = 0
        var meanMilliseconds: [Double] = []
        for (status, output) in results {
            #expect(status == 0)
            let lines = output.split(separator: "\n")
            let granted = lines.filter { $0.hasPrefix("grant ") }.compactMap {
                PostgresTimestamp.parse(String($0.dropFirst(6)))
            }
            #expect(granted.count == calls)
            grants += granted.map(Self.microseconds)
            if let stats = lines.last(where: { $0.hasPrefix("stats ") }) {
                let fields = Dictionary(
                    stats.dropFirst(6).split(separator: " ").compactMap { field -> (String, String)? in
                        let parts = field.split(separator: "=", maxSplits: 1)
                        return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
                    }, uniquingKeysWith: { first, _ in first })
                attempts += fields["attempts"].flatMap { Int($0) } ?? 0
                if let mean = fields["meanAttemptMs"].flatMap(Double.init) { meanMilliseconds.append(mean) }
            }
        }
        #expect(grants.count == 80)
        let times = GrantTimes(grants)
        #expect(times.maximumInAnyHalfOpenWindow(limit.enforcedWindow) <= limit.count)
        #expect(times.maximumInAnyClosedWindow(limit.window) <= limit.count)
        #expect(try #require(times.smallestSpan(ofGrants: limit.count)) >= limit.enforcedWindow)
        let published = Double(limit.count) / limit.window.secondsValue
        let ratio = try #require(times.sustainedRate(burst: limit.count)) / published
        let mean = meanMilliseconds.isEmpty ? 0 : meanMilliseconds.reduce(0, +) / Double(meanMilliseconds.count)
        print(
            "quota: \(processes) process(es), \(limit) (enforced over \(limit.enforcedWindow)): achieved ÷ allowed rate = "
                + String(format: "%.3f", ratio) + ", \(attempts) attempts, mean round trip "
                + String(format: "%.3f ms", mean))
        // A loose floor: the figure itself is printed above; a loaded host delays wake-ups and round trips.
        #expect(ratio >= 0.5)
    }

    @Test func aProbeStopsWithExitCode75WhenTheDayIsSpent() async throws {
        let conninfo = try Self.database("qprobecap")
        let results = try await Self.runTogether([
            [
                "--conninfo", conninfo, "--app", "a", "--api", Self.api.rawValue, "--calls", "5", "--limit", "100/1s",
                "--daily-cap", "3",
            ]
        ])
        #expect(results.first?.status == 75)
        #expect(results.first?.output.split(separator: "\n").filter { $0.hasPrefix("grant ") }.count == 3)
    }
}
