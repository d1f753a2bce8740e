import ArgumentParser
import Foundation
import Reconciler

/// `storerecon import subscriptions FILE.csv`.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load data from the app backend.",
        subcommands: [ImportSubscriptionsCommand.self, ImportPayoutsCommand.self, ImportConsumptionCommand.self]
    )
}

/// `storerecon import subscriptions FILE.csv [--skip-invalid]`.
struct ImportSubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Load known subscriptions from a CSV file (app,store_id,product_id,expires_at[,user_ref]).",
        discussion: """
            RFC 4180 CSV with a header row; columns in any order; expires_at is RFC 3339 (2026-12-01T00:00:00Z) or \
            empty; lower-case t and z are accepted, and a time without an offset is a bad line unless \
            --assume-utc is given. A UTF-8 byte order mark (Excel's "CSV UTF-8") is ignored. Re-importing updates changed rows and never duplicates. Any bad line stops the merge (nothing \
            is written) unless --skip-invalid is given; every bad line is reported with its number.
            Example: storerecon import subscriptions subscriptions.csv
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The CSV file.")
    var file: String

    @Flag(name: .long, help: "Read and check the file and count what would be merged; write nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Merge the valid rows even when some lines are bad (the bad ones are still reported).")
    var skipInvalid = false

    @Flag(
        name: .long, help: "Read an expires_at without an offset (2026-12-01T00:00:00) as UTC instead of rejecting it.")
    var assumeUtc = false

    func run() async throws {
        try await CommandRuntime.run(options, command: "import") { runtime in
            let connection = try runtime.connect()
            defer { connection.close() }
            try Migrator(connection: connection).verifyCurrent()
            if !dryRun { try AppRegistry.sync(runtime.configuration, on: connection) }
            let importer = SubscriptionImporter(
                connection: connection, knownApps: Set(runtime.configuration.apps.map(\.id)),
                appleApps: Set(runtime.configuration.apps.filter { $0.platform == .apple }.map(\.id)),
                assumeUTC: assumeUtc)
            let started = ContinuousClock.now
            let report = try importer.importFile(path: file, skipInvalid: skipInvalid, dryRun: dryRun)
            let elapsed = ContinuousClock.now - started
            for bad in report.badLines { runtime.logger.error("\(file): \(bad)") }
            if report.badLineCount > report.badLines.count {
                runtime.logger.error("\(file): \(report.badLineCount - report.badLines.count) more bad lines not shown")
            }
            let summary =
                "\(file): \(report.rowsRead) rows read, \(report.rowsValid) valid, \(report.badLineCount) bad; "
                + (report.merged
                    ? "\(report.inserted) inserted, \(report.updated) updated"
                    : dryRun ? "dry run: nothing written" : "nothing merged")
                + " in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))"
            runtime.logger.info("\(summary)")
            if report.badLineCount > 0 && !skipInvalid {
                throw ReconcilerError(
                    .input, "\(file): \(report.badLineCount) bad lines; nothing merged (fix them or use --skip-invalid)"
                )
            }
        }
    }
}
