import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// Runs every command with debug JSON logs, as a database role with a password, through successes and failures
/// (database unreachable, stores refusing the credentials, a secret substituted into the wrong key), and searches
/// everything storerecon wrote (logs, errors, status, reports in every format, the metrics file, every row of every
/// table) for the secrets it handled: none may appear. Key files others can read draw a warning.
@Suite("secrets never leak", .serialized)
struct SecretsTests {
    static let flags = ["--log-level", "debug", "--log-format", "json"]

    /// A login role with a password (cluster-wide, dropped afterwards). The test cluster trusts local connections,
    /// so the server does not ask for the password, but libpq parses and holds it: a leak would show.
    struct PasswordRole {
        let name = "secrets_\(UInt32.random(in: 0...UInt32.max))"
        let password = "Db-Secret-\(UInt64.random(in: 0...UInt64.max))"
        let admin: String

        init(admin: String) throws {
            self.admin = admin
            try PostgresConnection(conninfo: admin).execute(
                "CREATE ROLE \(name) LOGIN SUPERUSER PASSWORD '\(password)'")
        }

        func drop() {
            _ = try? PostgresConnection(conninfo: admin).execute("DROP ROLE IF EXISTS \(name)")
        }

        func conninfo(_ base: String) -> String { base + " user=\(name) password=\(password)" }
    }

    @Test func noKeyTokenOrPasswordReachesLogsOutputsOrTheDatabase() async throws {
        var options = NightlyRunTests.options()
        options.scenario.subscriptions = 1500
        options.scenario.refunds = 200
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "secrets", extraYAML: NightlyRunTests.extra)
            let role = try PasswordRole(admin: stores.conninfo)
            defer { role.drop() }
            let environment = ["STORERECON_DATABASE_URL": role.conninfo(stores.conninfo)]
            let binary = try BuiltExecutable("storerecon")
            let metrics = stores.directory.appendingPathComponent("m.prom").path
            let html = stores.directory.appendingPathComponent("r.html").path
            let csv = stores.directory.appendingPathComponent("subs.csv").path
            try "app,store_id,product_id,expires_at\ndemo-android,tok-secret-test,p,2030-01-01T00:00:00Z\n"
                .write(toFile: csv, atomically: true, encoding: .utf8)
            var outputs: [String] = []
            func run(_ arguments: [String], environment extra: [String: String] = [:], config: String? = nil)
                async throws -> BuiltExecutable.Outcome
            {
                let outcome = try await binary.run(
                    arguments + ["--config", config ?? stores.configPath] + Self.flags,
                    environment: environment.merging(extra) { $1 })
                outputs += [outcome.stdout, outcome.stderr]
                return outcome
            }
            let report = ["report", "refunds", "--from", "2026-01-01", "--to", "2027-12-31"]
            for arguments in [
                ["run", "nightly", "--metrics-file", metrics], ["status", "--format", "json"], ["status"],
                report + ["--detail", "--format", "csv"], report + ["--format", "json"],
                report + ["--format", "table"],
                report + ["--detail", "--format", "html", "--output", html], ["sync", "google-voided"],
                ["sync", "apple-refunds"], ["recheck"], ["import", "subscriptions", csv],
                ["backfill", "google-voided", "--since", "2026-01-01T00:00:00Z", "--dry-run"],
            ] {
                let outcome = try await run(arguments)
                #expect(outcome.status == 0, "\(arguments): \(outcome.stderr.suffix(1000))")
            }
            outputs.append(try String(contentsOfFile: metrics, encoding: .utf8))
            outputs.append(try String(contentsOfFile: html, encoding: .utf8))

            try await Self.runFailures(simulator: simulator, stores: stores, role: role) {
                try await run($0, environment: $1, config: $2)
            }
            outputs.append(try databaseText(stores))

            expectNoSecret(in: outputs.joined(separator: "\n"), role: role, simulator: simulator)
        }
    }

    /// The runs that fail: the stores refuse every credential, the database is unreachable (conninfo and URI forms),
    /// and the password substituted into a key that is not secret.
    static func runFailures(
        simulator: StoreSimulator, stores: SimulatedStores, role: PasswordRole,
        _ run: ([String], [String: String], String?) async throws -> BuiltExecutable.Outcome
    ) async throws {
        for endpoint in [SimulatorEndpoint.googleVoidedPurchases, .appleNotificationHistory, .appleRefundHistory] {
            simulator.setFaults(FaultSettings(rates: [.expiredAccessToken: 1]), for: endpoint)
        }
        let refused = try await run(["run", "nightly"], [:], nil)
        #expect(refused.status != 0)
        simulator.clearFaults()
        let unreachable = role.conninfo("host=/nonexistent-\(role.name) dbname=nodb")
        let uri = "postgresql://\(role.name):\(role.password)@/nodb?host=/nonexistent-\(role.name)"
        for url in [unreachable, uri] {
            for arguments in [["status"], ["run", "nightly"], ["sync", "google-voided"]] {
                let outcome = try await run(arguments, ["STORERECON_DATABASE_URL": url], nil)
                #expect(outcome.status != 0, "\(arguments) succeeded without a database")
            }
        }
        let misplaced = stores.directory.appendingPathComponent("misplaced.yaml").path
        try
            (try String(contentsOfFile: stores.configPath, encoding: .utf8)
            + "recheck: { concurrency: \"${DB_PASSWORD}\", lead: \"${DB_PASSWORD}\" }\n")
            .write(toFile: misplaced, atomically: true, encoding: .utf8)
        let badConfig = try await run(["status"], ["DB_PASSWORD": role.password], misplaced)
        #expect(badConfig.status == 78, "\(badConfig.stderr)")
    }

    /// No password, private key, bearer token, assertion or JWT in `haystack`, which holds real output.
    func expectNoSecret(in haystack: String, role: PasswordRole, simulator: StoreSimulator) {
        #expect(haystack.contains("demo-ios"), "the search covers real output")
        #expect(haystack.contains("\"level\""), "the logs searched are JSON")
        var needles = [
            role.password, "BEGIN PRIVATE KEY", "BEGIN RSA PRIVATE KEY", "Bearer ", "assertion=", "ya29.",
        ]
        needles += keyParts(simulator.keys.appStoreKey.privateKeyPEM)
        needles += keyParts(serviceAccountKey(simulator.serviceAccountJSON))
        for needle in needles {
            #expect(!haystack.contains(needle), "found \(needle.prefix(12))… in storerecon's output")
        }
        // No JWT (header.payload.signature, base64url JSON) anywhere: bearer tokens and signed assertions.
        #expect(
            haystack.range(of: #"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\."#, options: .regularExpression)
                == nil)
    }

    @Test func keyFilesOthersCanReadDrawAWarning() async throws {
        var options = NightlyRunTests.options()
        options.scenario.subscriptions = 200
        options.scenario.refunds = 20
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "keymode", extraYAML: NightlyRunTests.extra)
            let serviceAccount = try #require(stores.app(.google).serviceAccountFile)
            let p8 = try #require(stores.app(.apple).privateKeyFile)
            let binary = try BuiltExecutable("storerecon")
            for mode in [0o644, 0o640, 0o604] {
                for file in [serviceAccount, p8] {
                    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
                }
                for job in ["google-voided", "apple-refunds"] {
                    let outcome = try await binary.run(["sync", job, "--config", stores.configPath] + Self.flags)
                    #expect(outcome.status == 0, "\(outcome.stderr.suffix(1000))")
                    let file = job == "google-voided" ? serviceAccount : p8
                    let warnings = outcome.stderr.split(separator: "\n").filter {
                        $0.contains("\"warning\"") && $0.contains(file) && $0.contains("0600")
                    }
                    #expect(
                        warnings.count == 1, "mode \(String(mode, radix: 8)), \(job): \(outcome.stderr.prefix(2000))")
                }
            }
            for file in [serviceAccount, p8] {
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            }
            let quiet = try await binary.run(["sync", "google-voided", "--config", stores.configPath] + Self.flags)
            #expect(!quiet.stderr.contains("0600"))
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

    /// The base64 body of a PEM key: each full line, and the DER's base64 in pieces that do not depend on where the
    /// lines break (so a re-wrapped or one-line copy is found too). The first 64 characters, which encode the
    /// algorithm identifiers every key of a kind shares, are left out of the pieces.
    func keyParts(_ pem: String) -> [String] {
        let lines = pem.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") }
        let body = lines.joined()
        var parts = lines.dropFirst().filter { $0.count >= 40 }
        var start = body.index(body.startIndex, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
        while body.distance(from: start, to: body.endIndex) >= 24 {
            let end = body.index(start, offsetBy: 24)
            parts.append(String(body[start..<end]))
            start = body.index(start, offsetBy: 32, limitedBy: body.endIndex) ?? body.endIndex
        }
        return parts
    }

    func serviceAccountKey(_ json: String) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return object?["private_key"] as? String ?? ""
    }
}
