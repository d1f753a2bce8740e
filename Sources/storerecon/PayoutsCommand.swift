import ArgumentParser
import Foundation
import Payouts
import Reconciler

/// `storerecon payouts list | drop`.
struct PayoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payouts",
        abstract: "The stores' financial reports loaded for the tie-out: list them, or drop a wrong one.",
        discussion: """
            A report is stored once by its content (the file's SHA-256), whatever the file is called, by `sync \
            payouts` and `import payouts` alike. A report loaded by mistake (another account's, another app's) is \
            dropped with a reason: it no longer counts in the tie-out, and the drop is kept with when and why. See the \
            Runbook, "The reports loaded".
            """,
        subcommands: [List.self, Drop.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Show the reports loaded, and those dropped with when and why.",
            discussion: "Example: storerecon payouts list --app acme-android --format json")

        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "Only this app.") var app: String?
        @Option(name: .long, help: "Output format: table or json.") var format: Format = .table

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

        func run() async throws {
            try await CommandRuntime.run(options, command: "payouts list") { runtime in
                if let app { _ = try runtime.apps(matching: app) }
                let connection = try runtime.connect()
                defer { connection.close() }
                try Migrator(connection: connection).verifyCurrent()
                let entries = try PayoutStore(connection: connection).list(app: app)
                let text = format == .json ? try PayoutsListing.json(entries) : PayoutsListing.table(entries)
                print(text, terminator: "")
            }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "drop",
            abstract: "Drop a report loaded by mistake, recording why; the tie-out stops counting it.",
            discussion: """
                The report leaves the tie-out at once; its file is kept with the drop, and `payouts list` shows it \
                with the time and the reason. `sync payouts` does not store a dropped report again; `import payouts` \
                of the same file stores it again under a new id, and it counts again.
                Example: storerecon payouts drop 12 --reason "another developer account's earnings"
                """)

        @OptionGroup var options: GlobalOptions
        @Argument(help: "The report's id (see payouts list).") var id: Int64
        @Option(name: .long, help: "Why it is dropped (kept with the drop).") var reason: String

        func validate() throws {
            if reason.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--reason must say why") }
        }

        func run() async throws {
            try await CommandRuntime.run(options, command: "payouts drop") { runtime in
                let connection = try runtime.connect()
                defer { connection.close() }
                try Migrator(connection: connection).verifyCurrent()
                switch try PayoutStore(connection: connection).drop(id: id, reason: reason) {
                case .dropped(let app, let sourceName):
                    print("payout report #\(id) (\(app), \(sourceName)) dropped: the tie-out no longer counts it")
                case .unknown:
                    throw ReconcilerError(.input, "payout report #\(id): no report has that id (see payouts list)")
                case .alreadyDropped(let at, let reason):
                    throw ReconcilerError(
                        .input, "payout report #\(id) was dropped already, at \(PayoutsListing.time(at)): \(reason)")
                }
            }
        }
    }
}
