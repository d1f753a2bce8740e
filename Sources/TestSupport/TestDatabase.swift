import Foundation
import Postgres

/// Fresh databases on the throwaway cluster that `scripts/test` starts (`STORERECON_TEST_PGHOST` /
/// `STORERECON_TEST_PGPORT`). Each test suite creates its own database, so suites run in parallel without
/// seeing each other's rows.
public enum TestDatabase {
    /// The cluster's socket directory (or host) and port, from the environment `scripts/test` sets.
    public static func server() throws -> (host: String, port: String) {
        let environment = ProcessInfo.processInfo.environment
        guard let host = environment["STORERECON_TEST_PGHOST"], !host.isEmpty else {
            throw PostgresError(
                code: .usage, operation: "test setup",
                message:
                    "STORERECON_TEST_PGHOST is not set: run the tests through scripts/test, which starts PostgreSQL")
        }
        return (host, environment["STORERECON_TEST_PGPORT"] ?? "5432")
    }

    /// A conninfo string for `database` on the test cluster.
    public static func conninfo(database: String) throws -> String {
        let (host, port) = try server()
        return "host=\(host) port=\(port) user=postgres dbname=\(database)"
    }

    /// Creates an empty database with a unique name and returns its conninfo.
    public static func create(prefix: String = "t") throws -> String {
        let safePrefix = prefix.lowercased().filter { ("a"..."z").contains($0) || $0 == "_" }
        let name = "\(safePrefix)_\(UInt64.random(in: 0...UInt64.max) & 0xffff_ffff_ffff)"
        let admin = try PostgresConnection(conninfo: conninfo(database: "postgres"))
        defer { admin.close() }
        // CREATE DATABASE takes no parameters; the name is generated above from [a-z0-9_] only.
        try admin.executeScript("CREATE DATABASE \(name)")
        return try conninfo(database: name)
    }
}
