import AppStoreServerAPI
import ArgumentParser
import Foundation
import Logging
import RateLimiting
import Reconciler

/// Times storerecon's Apple refund stage apart from the store's HTTP: signed refund transactions already in hand
/// (one JWS a line, as Refund History returned them) are verified against the configured root certificates,
/// decoded and stored page by page (each page in one transaction, on `sync.appleConcurrency` readers), exactly as
/// `sync apple-refunds` does after each call. No store call is made. `scripts/bench` compares the rate with Apple's
/// official Python library verifying the same payloads.
@main
struct VerifyProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-probe",
        abstract: "Verify, decode and store signed Apple refund transactions from a file; print the rate.",
        discussion: """
            Prints one JSON line: {"payloads", "stored", "seconds", "rate"}. Exits 1 when a payload fails \
            verification. The database must be migrated (`storerecon migrate`).
            """)

    @Option(help: "storerecon configuration (database, the Apple app, its root certificates).")
    var config: String

    @Option(help: "The configured Apple app id.")
    var app: String

    @Option(help: "File of signed transactions, one JWS a line.")
    var payloads: String

    @Option(help: "Payloads a page (Refund History returns up to 20).")
    var pageSize = 20

    func run() async throws {
        let configuration = try ConfigurationLoader().load(path: config)
        guard let appConfig = configuration.apps.first(where: { $0.id == app && $0.platform == .apple }) else {
            throw ValidationError("\(config): no Apple app \(app)")
        }
        let lines = try String(contentsOfFile: payloads, encoding: .utf8).split(separator: "\n").map(String.init)
        let pages = stride(from: 0, to: lines.count, by: pageSize).map {
            Array(lines[$0..<min(lines.count, $0 + pageSize)])
        }
        var logger = Logger(label: "verify-probe")
        logger.logLevel = .warning
        let gate = PostgresQuotaGate(conninfo: configuration.database.url, policy: configuration.quotaPolicy)
        let runner = JobRunner(
            configuration: configuration, gate: gate, shutdown: ShutdownSignal(), dryRun: false, quiet: true,
            logger: logger)
        let result = try await runner.run(job: "apple_verify_probe", app: appConfig, waitForLock: true) {
            environment in
            let access = try StoreClients.apple(
                for: appConfig, configuration: configuration, gate: environment.gate, logger: environment.logger)
            _ = try await AppleRefundSync(app: appConfig, configuration: configuration, access: access)
                .store(pages: pages, from: StoreClients.appleEnvironment(appConfig), in: environment)
        }
        guard result.exitCode == 0 else {
            throw ValidationError(result.error ?? "failed")
        }
        // The job's time: connecting, verifying, decoding and every page's transaction.
        let seconds = result.seconds
        let stored = result.counts["inserted", default: 0] + result.counts["updated", default: 0]
        print(
            #"{"payloads": \#(lines.count), "stored": \#(stored), "seconds": \#(seconds), "rate": \#(Double(lines.count) / seconds)}"#
        )
    }
}
