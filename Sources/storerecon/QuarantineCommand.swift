import ArgumentParser
import Foundation
import RateLimiting
import Reconciler
import Reports

/// `storerecon quarantine list | retry | drop`.
struct QuarantineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "Rows a store sent that could not be stored: list them, retry them after a fix, or drop them.",
        discussion: """
            A store's data never stops a job: a row that cannot be stored (a key field missing, a value of the wrong
            type, an id too long, a row the database refuses, a signed payload that fails verification) is set aside
            with its raw form and the reason, and `status` exits 1 until it is retried into the ledger or dropped.
            See the Runbook, "Quarantined rows".
            """,
        subcommands: [List.self, Retry.self, Drop.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Show quarantined rows (open ones unless --all).",
            discussion: "Example: storerecon quarantine list --app acme-android --format json")

        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "Only this app.") var app: String?
        @Option(name: .long, help: "Only the row with this id.") var id: Int64?
        @Flag(name: .long, help: "Also rows already retried into the ledger or dropped.") var all = false
        @Option(name: .long, help: "Output format: table or json.") var format: Format = .table

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

        func run() async throws {
            try await CommandRuntime.run(options, command: "quarantine list") { runtime in
                if let app { _ = try runtime.apps(matching: app) }
                let connection = try runtime.connect()
                defer { connection.close() }
                // The table shows no payload: only the JSON reads them.
                let entries = try QuarantineRetry.list(
                    app: app, all: all || id != nil, id: id, withRaw: format == .json, on: connection)
                let text = format == .json ? try QuarantineListing.json(entries) : QuarantineListing.table(entries)
                print(text, terminator: "")
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Re-apply quarantined rows through their job's normal path; those that land are closed.",
            discussion: "Example: storerecon quarantine retry --all   (after an upgrade or a schema fix)")

        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "Only the row with this id.") var id: Int64?
        @Flag(name: .long, help: "Every open row (of --app, if given).") var all = false
        @Option(name: .long, help: "Only this app.") var app: String?

        func validate() throws {
            if (id == nil) == (!all) { throw ValidationError("give either --id N or --all") }
        }

        func run() async throws {
            try await CommandRuntime.run(options, command: "quarantine retry") { runtime in
                if let app { _ = try runtime.apps(matching: app) }
                let connection = try runtime.connect()
                defer { connection.close() }
                if let id,
                    try QuarantineRetry.list(app: app, all: false, id: id, withRaw: false, on: connection).isEmpty
                {
                    throw ReconcilerError(
                        .input,
                        "quarantine #\(id): no open quarantined row has that id\(app.map { " for app \($0)" } ?? "")")
                }
                let configuration = runtime.configuration
                let gate = PostgresQuotaGate(
                    conninfo: configuration.database.url, policy: configuration.quotaPolicy, clock: ContinuousClock())
                let retry = QuarantineRetry(
                    configuration: configuration, connection: connection, logger: runtime.logger
                ) { app in
                    try StoreClients.apple(for: app, configuration: configuration, gate: gate, logger: runtime.logger)
                }
                let outcome = try await retry.retry(id: id, app: app)
                print("\(outcome.landed) landed, \(outcome.stillRefused) still cannot be stored")
                if outcome.stillRefused > 0 { throw ExitCode(1) }
            }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "drop", abstract: "Abandon quarantined rows, recording why.",
            discussion: #"""
                Example: storerecon quarantine drop --id 12 --reason "test order from QA, not a refund"
                         storerecon quarantine drop --all --app acme-ios --reason "sandbox payloads, not ours"
                """#)

        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "Only the row with this id (see quarantine list).") var id: Int64?
        @Flag(name: .long, help: "Every open row (of --app, if given).") var all = false
        @Option(name: .long, help: "Only this app.") var app: String?
        @Option(name: .long, help: "Why it is abandoned (kept with the row).") var reason: String

        func validate() throws {
            if (id == nil) == (!all) { throw ValidationError("give either --id N or --all") }
            if reason.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--reason must say why") }
        }

        func run() async throws {
            try await CommandRuntime.run(options, command: "quarantine drop") { runtime in
                if let app { _ = try runtime.apps(matching: app) }
                let connection = try runtime.connect()
                defer { connection.close() }
                let dropped = try QuarantineRetry.drop(id: id, app: app, reason: reason, on: connection)
                if let id, dropped == 0 {
                    throw ReconcilerError(
                        .input,
                        "quarantine #\(id): no open quarantined row has that id\(app.map { " for app \($0)" } ?? "")")
                }
                print(id.map { "quarantine #\($0) dropped" } ?? "\(dropped) quarantined rows dropped")
            }
        }
    }
}
