import Foundation

/// Runs one of the package's built executables (`storerecon`, `storesim`) as cron would: a separate process, with
/// its exit code, stdout and stderr captured.
public struct BuiltExecutable: Sendable {
    /// What a finished process left behind.
    public struct Outcome: Sendable {
        /// The exit code (or 128 + signal).
        public var status: Int32
        /// Everything written to stdout.
        public var stdout: String
        /// Everything written to stderr.
        public var stderr: String
    }

    /// The executable's path.
    public let url: URL

    /// The executable named `name` in the build folder this test binary runs from.
    public init(_ name: String) throws {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the test bundle is a plain executable beside the products; elsewhere it may be nested.
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path)
        {
            directory = directory.deletingLastPathComponent()
        }
        url = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
    }

    /// Starts the executable without waiting, with stdout and stderr sent to files.
    public func start(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil) throws
        -> (Process, stdout: URL, stderr: URL)
    {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        // Every run of a binary checks that no database call blocks a thread of Swift's shared pool.
        merged["STORERECON_CHECK_DATABASE_THREADS"] = "1"
        merged.merge(environment) { $1 }
        process.environment = merged
        if let directory { process.currentDirectoryURL = directory }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("proc-\(UUID().uuidString)")
        let out = base.appendingPathExtension("out")
        let err = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, out, err)
    }

    /// Runs the executable to completion without blocking a thread of the concurrency pool (tests that host the
    /// store simulator in-process need those threads to answer the child's requests).
    public func run(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil) async throws
        -> Outcome
    {
        let (process, out, err) = try start(arguments, environment: environment, directory: directory)
        await Self.waitForExit(process)
        return Self.outcome(process, out, err)
    }

    /// What an ended process left: its status and output, whose files are removed once read.
    static func outcome(_ process: Process, _ out: URL, _ err: URL) -> Outcome {
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        return Outcome(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// Waits for a started process to end, sleeping between looks rather than blocking a thread.
    public static func waitForExit(_ process: Process) async {
        while process.isRunning {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Runs the executable to completion, blocking the calling thread (only for tests with no in-process server).
    public func run(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil) throws
        -> Outcome
    {
        let (process, out, err) = try start(arguments, environment: environment, directory: directory)
        process.waitUntilExit()
        return Self.outcome(process, out, err)
    }
}
