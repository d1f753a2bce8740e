import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A job command handles SIGTERM from its start, not only once its jobs run: a stop signal during its setup (here
/// the database, which takes the connection and never answers) ends it with exit 75 and the metrics file written,
/// rather than killing it with no file (a systemd stop or a deploy during a nightly run's first seconds).
@Suite("a stop signal during a job command's setup")
struct EarlySignalTests {
    /// A unix socket named as PostgreSQL's in a new directory, listening, never answering: the kernel completes
    /// each connection, and libpq then waits for a greeting that never comes.
    static func silentServer() throws -> (directory: URL, descriptor: Int32) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("silentpg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(".s.PGSQL.5432").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0 && listen(descriptor, 16) == 0)
        return (directory, descriptor)
    }

    /// A connection waits in the listening socket's queue (none is ever accepted).
    static func hasPendingConnection(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    @Test func aSigtermWhileConnectingExits75WithTheMetricsFile() async throws {
        let workspace = try CommandWorkspace(prefix: "earlysignal")
        let (socketDirectory, descriptor) = try Self.silentServer()
        defer {
            close(descriptor)
            try? FileManager.default.removeItem(at: socketDirectory)
            try? FileManager.default.removeItem(at: workspace.directory)
        }
        let metrics = workspace.directory.appendingPathComponent("run.prom").path
        let (process, _, errors) = try workspace.storerecon.start(
            ["run", "nightly", "--metrics-file", metrics],
            environment: [
                "STORERECON_DATABASE_URL": "host=\(socketDirectory.path) port=5432 dbname=x user=x connect_timeout=3"
            ],
            directory: workspace.directory)
        // Signalled once its connection is waiting on the silent server: inside the setup, however loaded the host.
        while process.isRunning, !Self.hasPendingConnection(descriptor) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(process.isRunning, "the command ended before the signal")
        kill(process.processIdentifier, SIGTERM)
        await BuiltExecutable.waitForExit(process)
        let log = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        #expect(process.terminationReason == .exit, "killed by the signal: \(log.suffix(800))")
        #expect(process.terminationStatus == 75, "\(log.suffix(800))")
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(text.contains("storerecon_run_exit_code{command=\"run nightly\"} 75"), "\(text)")
    }
}
