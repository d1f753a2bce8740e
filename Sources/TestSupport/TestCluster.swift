import Foundation

/// A PostgreSQL cluster of a test's own, for attacks the shared test cluster must not suffer: stopping the server
/// mid-run, restarting it, and failing over to a streaming standby. Like `scripts/test`, it runs the server as the
/// `postgres` user when the tests run as root (PostgreSQL refuses root), on a unix socket in a temporary directory,
/// with no TCP listener and `fsync` off.
public final class TestCluster: Sendable {
    /// The directory that holds the data folder, the log and the socket.
    public let directory: URL
    /// The socket directory, as libpq's `host`.
    public var socketDirectory: String { directory.path }
    /// The data directory.
    public var dataDirectory: String { directory.appendingPathComponent("data").path }

    /// PostgreSQL's programs: `STORERECON_TEST_PGBIN`, else Debian's PostgreSQL 15.
    static var binaries: String {
        ProcessInfo.processInfo.environment["STORERECON_TEST_PGBIN"] ?? "/usr/lib/postgresql/15/bin"
    }

    private init(directory: URL) {
        self.directory = directory
    }

    /// A new, started primary.
    public static func primary() throws -> TestCluster {
        let cluster = try TestCluster(directory: makeDirectory("primary"))
        try cluster.pg(
            "initdb", "-D", cluster.dataDirectory, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
        try cluster.start()
        return cluster
    }

    /// A new streaming standby of this cluster (read-only until promoted), started.
    public func standby() throws -> TestCluster {
        let standby = try TestCluster(directory: Self.makeDirectory("standby"))
        // A fast checkpoint: the default spread one naps 100 ms per dirty buffer while ahead of schedule, a minute
        // or more after a CREATE DATABASE.
        try standby.pg(
            "pg_basebackup", "-h", socketDirectory, "-U", "postgres", "-D", standby.dataDirectory, "-R", "-X", "stream",
            "--checkpoint=fast")
        try standby.start()
        return standby
    }

    /// A libpq conninfo for `database` on this cluster.
    public func conninfo(database: String) -> String {
        "host=\(socketDirectory) port=5432 user=postgres dbname=\(database)"
    }

    /// Starts the server and waits until it accepts connections.
    public func start() throws {
        let options =
            "-c listen_addresses='' -c unix_socket_directories='\(socketDirectory)' -c fsync=off "
            + "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100 -c shared_buffers=64MB"
        let log = directory.appendingPathComponent("server.log").path
        try pg("pg_ctl", "-D", dataDirectory, "-l", log, "-w", "-t", "60", "start", "-o", options)
    }

    /// Stops the server: `immediate` is a crash (no shutdown checkpoint, clients cut off), `fast` an orderly stop
    /// that still ends every session.
    public func stop(mode: String = "immediate") throws {
        try pg("pg_ctl", "-D", dataDirectory, "-m", mode, "-w", "stop")
    }

    /// Turns a standby into a primary and waits until it accepts writes.
    public func promote() throws {
        try pg("pg_ctl", "-D", dataDirectory, "-w", "promote")
    }

    /// Stops the server if it runs and removes its files.
    public func remove() {
        _ = try? pg("pg_ctl", "-D", dataDirectory, "-m", "immediate", "-w", "stop")
        try? FileManager.default.removeItem(at: directory)
    }

    private static func makeDirectory(_ role: String) throws -> URL {
        let url = URL(fileURLWithPath: "/tmp").appendingPathComponent(
            "storerecon-\(role)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        if getuid() == 0 {
            let owner = try runProcess("/usr/bin/id", ["-u", "postgres"]).trimmingCharacters(
                in: .whitespacesAndNewlines)
            let group = try runProcess("/usr/bin/id", ["-g", "postgres"]).trimmingCharacters(
                in: .whitespacesAndNewlines)
            guard let uid = UInt32(owner), let gid = UInt32(group), chown(url.path, uid, gid) == 0 else {
                throw TestClusterError(message: "cannot give \(url.path) to the postgres user")
            }
        }
        return url
    }

    /// Runs one of PostgreSQL's programs as the cluster's owner; throws with its output when it fails.
    @discardableResult
    private func pg(_ program: String, _ arguments: String...) throws -> String {
        let path = "\(Self.binaries)/\(program)"
        if getuid() == 0 {
            return try Self.runProcess("/usr/sbin/runuser", ["-u", "postgres", "--", path] + arguments)
        }
        return try Self.runProcess(path, arguments)
    }

    private static func runProcess(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        // Reaped here rather than by waitUntilExit(): Foundation on Linux can miss the exit of `runuser` once pg_ctl
        // has left a server running, and wait forever on a zombie.
        var status: Int32 = 0
        var reaped = waitpid(process.processIdentifier, &status, WNOHANG)
        while reaped == 0 {
            usleep(10_000)
            reaped = waitpid(process.processIdentifier, &status, WNOHANG)
        }
        // -1: Foundation reaped it first and knows (or is about to know) the status.
        if reaped == -1 { while process.isRunning { usleep(10_000) } }
        let exitCode = reaped == -1 ? process.terminationStatus : (status & 0x7f == 0 ? (status >> 8) & 0xff : 128)
        let text = String(decoding: data, as: UTF8.self)
        guard exitCode == 0 else {
            let command = ([URL(fileURLWithPath: path).lastPathComponent] + arguments).joined(separator: " ")
            throw TestClusterError(message: "\(command) exited \(exitCode): \(text.suffix(1500))")
        }
        return text
    }
}

/// A cluster command that failed, with what it printed.
public struct TestClusterError: Error, CustomStringConvertible {
    /// What failed.
    public var message: String
    public var description: String { message }
}
