import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// Runs every job with debug JSON logs and searches everything storerecon wrote (logs, status, reports, the
/// metrics file, every text column of the database) for the secrets it handled: none may appear.
@Suite("secrets never leak")
struct SecretsTests {
    @Test func noKeyTokenOrPasswordReachesLogsOutputsOrTheDatabase() async throws {
        var options = NightlyRunTests.options()
        options.scenario.subscriptions = 1500
        options.scenario.refunds = 200
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "secrets", extraYAML: NightlyRunTests.extra)
            let password = "Db-Secret-\(UInt32.random(in: 0...UInt32.max))"
            // Trust authentication ignores the password, but libpq still parses and holds it: a leak would show.
            let environment = ["STORERECON_DATABASE_URL": stores.conninfo + " password=\(password)"]
            let binary = try BuiltExecutable("storerecon")
            let metrics = stores.directory.appendingPathComponent("m.prom").path
            let report = stores.directory.appendingPathComponent("r.html").path
            var outputs: [String] = []
            for arguments in [
                ["run", "nightly", "--metrics-file", metrics], ["status", "--format", "json"], ["status"],
                ["report", "refunds", "--from", "2026-01-01", "--to", "2027-12-31", "--detail", "--format", "csv"],
                [
                    "report", "refunds", "--from", "2026-01-01", "--to", "2027-12-31", "--format", "html", "--output",
                    report,
                ],
                ["sync", "google-voided"], ["sync", "apple-refunds"],
            ] {
                let outcome = try await binary.run(
                    arguments + ["--config", stores.configPath, "--log-level", "debug", "--log-format", "json"],
                    environment: environment)
                outputs += [outcome.stdout, outcome.stderr]
            }
            outputs.append(try String(contentsOfFile: metrics, encoding: .utf8))
            outputs.append(try String(contentsOfFile: report, encoding: .utf8))
            outputs.append(try databaseText(stores))
            let haystack = outputs.joined(separator: "\n")
            #expect(haystack.contains("demo-ios"), "the search covers real output")
            var needles = [password, "BEGIN PRIVATE KEY", "BEGIN RSA PRIVATE KEY", "Bearer ", "assertion="]
            needles += keyBodyLines(simulator.keys.appStoreKey.privateKeyPEM)
            needles += keyBodyLines(serviceAccountKey(simulator.serviceAccountJSON))
            for needle in needles {
                #expect(!haystack.contains(needle), "found \(needle.prefix(12))… in storerecon's output")
            }
            // No JWT (header.payload.signature, base64url JSON) anywhere: bearer tokens and signed assertions.
            #expect(
                haystack.range(of: #"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\."#, options: .regularExpression)
                    == nil)
        }
    }

    /// Every row of every table, as one string (PostgreSQL quotes the table names itself with `%I`).
    func databaseText(_ stores: SimulatedStores) throws -> String {
        let rows = try PostgresConnection(conninfo: stores.conninfo).query(
            """
            SELECT query_to_xml(format('SELECT * FROM %I', tablename), true, false, '')::text AS dump
            FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename
            """)
        return try rows.map { try $0.decode("dump", as: String.self) }.joined(separator: "\n")
    }

    /// The base64 lines of a PEM key (long enough to be unmistakable).
    func keyBodyLines(_ pem: String) -> [String] {
        pem.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") && $0.count >= 40 }
    }

    func serviceAccountKey(_ json: String) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return object?["private_key"] as? String ?? ""
    }
}
