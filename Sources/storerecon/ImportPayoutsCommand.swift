import ArgumentParser
import Foundation
import Payouts
import Reconciler

/// `storerecon import payouts --app ID FILE...`.
struct ImportPayoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payouts",
        abstract: "Load the stores' financial reports downloaded by hand (Google earnings zip, Apple FINANCIAL gzip).",
        discussion: """
            Each file is stored whole or not at all: a bad file (truncated, wrong header, unknown currency, a value \
            that is not a number) is reported with its line and column and nothing of it is stored (the files before \
            it stay stored, each whole; fix the file and run the command again). A report is stored once \
            with its rows, source name and checksum; the same file again changes nothing; another version of the same \
            report (Google re-issued it) replaces the old one in one transaction, and the command says so.
            Example: storerecon import payouts --app acme-android earnings_202610_1234567890-1.zip
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The app the reports belong to (its platform tells the format).")
    var app: String

    @Argument(help: "The report files.")
    var files: [String]

    func run() async throws {
        try await CommandRuntime.run(options, command: "import payouts") { runtime in
            guard let config = try runtime.apps(matching: app).first else { return }
            let store: PayoutReport.Store = config.platform == .google ? .google : .apple
            let connection = try runtime.connect()
            defer { connection.close() }
            try Migrator(connection: connection).verifyCurrent()
            try AppRegistry.sync(runtime.configuration, on: connection)
            let payouts = PayoutStore(connection: connection)
            for file in files {
                // Parsed while it is stored: a million-row report is not held in memory, and PostgreSQL works on
                // the rows already sent while the next ones are read.
                let stream = try PayoutFile.stream(path: file, store: store)
                let report = stream.header
                let (outcome, rows) = try payouts.store(stream, app: config.id)
                let count = outcome == .unchanged ? "" : ", \(rows) rows"
                let line =
                    "\(report.sourceName): \(report.store.rawValue) report \(report.month) "
                    + "(\(report.periodStart)..\(report.periodEnd))\(count): \(outcome.rawValue)"
                if outcome == .replaced {
                    runtime.logger.warning("\(line) (the store re-issued it; the old version was replaced)")
                } else {
                    runtime.logger.info("\(line)")
                }
            }
        }
    }
}
