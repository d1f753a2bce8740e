import ArgumentParser
import Foundation
import Postgres
import Reconciler
import Reports

/// `storerecon report tie-out --month YYYY-MM [--app ID] [--detail] [--format ...] [--output FILE]`.
struct ReportTieOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tie-out",
        abstract: "Tie the month's refunds out against the stores' financial reports. Reads a snapshot; never writes.",
        discussion: """
            Google per order (the ledger's refunds of the US-Pacific month, net of tax, against the earnings \
            report's Charge refund rows), Apple per product x country x currency over the FINANCIAL report's own \
            period; the ledger side of each store is report refunds --month M --store-periods. Each line is \
            matched, amount_differs, ledger_only, report_only (Google) or differs (Apple), with a cause and a note \
            where one is known; every format ends with totals per store, currency and cause and a legend \
            (docs/tie-out.md). Exit 0 whatever the differences: they are findings. Load the reports first with \
            sync payouts or import payouts.
            Example: storerecon report tie-out --month 2026-10 --detail --format csv --output tieout-2026-10.csv
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The month, YYYY-MM (Google: US-Pacific calendar month; Apple: fiscal month).")
    var month: String

    @Option(name: .long, help: "Only this app.")
    var app: String?

    @Flag(name: .long, help: "One line per Google order and Apple product x country x currency.")
    var detail = false

    @Option(name: .long, help: "table, csv, json or html.")
    var format: TieOutFormat = .table

    @Option(name: .long, help: "Write to this file (atomically) instead of stdout.")
    var output: String?

    enum TieOutFormat: String, ExpressibleByArgument, CaseIterable {
        case table, csv, json, html

        var format: TieOutReport.Format { TieOutReport.Format(rawValue: rawValue) ?? .table }
    }

    func run() async throws {
        try await CommandRuntime.run(options, command: "report tie-out") { runtime in
            let apps = try runtime.apps(matching: app)
            let connection = try runtime.connect()
            defer { connection.close() }
            try Migrator(connection: connection).verifyCurrent()
            let report: TieOutReport
            do {
                report = try write(apps: apps, on: connection)
            } catch let error as ReportError {
                throw ReportRefundsCommand.failure(error)
            }
            for missing in report.missingReports {
                runtime.logger.warning("no financial report loaded for \(missing) in \(month): run sync payouts")
            }
            if let output { runtime.logger.info("wrote \(format.rawValue) tie-out to \(output)") }
            runtime.logger.info("tie-out \(month): \(report.counts)")
        }
    }

    /// Writes the tie-out to `--output` (atomically) or stdout.
    func write(apps: [AppConfig], on connection: PostgresConnection) throws -> TieOutReport {
        let sink = try output.map { try RefundReportOutput.file(atomicallyAt: $0) } ?? .standardOutput()
        do {
            let report = try TieOutReport.write(
                month: try StorePeriods.month(option: month),
                apps: Dictionary(uniqueKeysWithValues: apps.map { ($0.id, $0.platform.rawValue) }),
                detail: detail, format: format.format, on: connection, to: sink)
            try sink.finish()
            return report
        } catch {
            sink.discard()
            throw error
        }
    }
}
