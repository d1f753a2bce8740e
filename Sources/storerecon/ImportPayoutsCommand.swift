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
            it stay stored, each whole; fix the file and run the command again). A report is stored once by its \
            content (the file's SHA-256), whatever the file is called: the same bytes again, under any name, store \
            nothing and the command names the report that holds them ("already loaded as report N"). Another \
            version of the same report (Google re-issued it) replaces the old one in one transaction, and the \
            command says so. The bytes of a report dropped with `payouts drop` are stored again under a new id, and \
            count in the tie-out again. See `storerecon payouts list`.
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
                let stored = try payouts.store(stream, app: config.id)
                let line =
                    "\(report.sourceName): \(report.store.rawValue) report \(report.month) "
                    + "(\(report.periodStart)..\(report.periodEnd))\(Self.outcome(stored))"
                if stored.outcome == .replaced {
                    runtime.logger.warning("\(line) (the store re-issued it; the old version was replaced)")
                } else {
                    runtime.logger.info("\(line)")
                }
            }
        }
    }

    /// What storing did, as the end of the file's line.
    static func outcome(_ stored: PayoutStore.Stored) -> String {
        switch stored.outcome {
        case .unchanged:
            return ": unchanged (already loaded as report \(stored.reportId))"
        case .duplicate:
            return ": already loaded as report \(stored.reportId) (\(stored.heldBy ?? "")); nothing stored"
        case .inserted, .replaced, .keptDropped:
            let again = stored.droppedBefore.map { "; its content was dropped as report \($0), and counts again" }
            return ", \(stored.rows) rows: \(stored.outcome.rawValue) as report \(stored.reportId)\(again ?? "")"
        }
    }
}
