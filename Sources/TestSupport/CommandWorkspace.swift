import Foundation

/// What a test of the built `storerecon` binary starts from: a database of its own, a temporary directory holding a
/// `storerecon.yaml` that names it (one Google app whose key file does not exist: commands that call no store run),
/// and the binary run in that directory, as cron would.
public struct CommandWorkspace: Sendable {
    /// The test's database.
    public let conninfo: String
    /// The working directory; `storerecon.yaml` is in it.
    public let directory: URL
    /// The built binary.
    public let storerecon: BuiltExecutable

    /// Creates the database (named after `prefix`) and the directory.
    /// - Parameter app: the `apps` entry written to the configuration.
    public init(
        prefix: String,
        app: String =
            "{ id: demo-android, platform: google, packageName: com.example.demo, serviceAccountFile: /nonexistent.json }"
    ) throws {
        conninfo = try TestDatabase.create(prefix: prefix)
        storerecon = try BuiltExecutable("storerecon")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try """
        database:
          url: "\(conninfo)"
        apps:
          - \(app)
        """.write(to: directory.appendingPathComponent("storerecon.yaml"), atomically: true, encoding: .utf8)
    }

    /// Runs the binary in the directory and waits for it.
    public func run(_ arguments: [String], environment: [String: String] = [:]) throws -> BuiltExecutable.Outcome {
        try storerecon.run(arguments, environment: environment, directory: directory)
    }

    /// Runs the binary in the directory without blocking the caller's thread.
    public func run(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> BuiltExecutable.Outcome
    {
        try await storerecon.run(arguments, environment: environment, directory: directory)
    }
}
