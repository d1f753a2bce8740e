import ArgumentParser
import Foundation
import Reconciler
import Reports

/// `storerecon report`.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Reports for finance.",
        subcommands: [ReportRefundsCommand.self]
    )
}

/// `storerecon report refunds --from DATE --to DATE [--by ...] [--detail] [--format ...] [--output FILE]`.
struct ReportRefundsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refunds",
        abstract: "Refunds over a date range, grouped or one row per refund. Reads a snapshot; never writes.",
        discussion: """
            Dates are inclusive, in reports.timeZone (UTC unless configured). Amounts (gross, tax, net = gross - \
            tax) are what the stores refunded (source store) or estimates from configured prices (source \
            configured), summed exactly and rounded half to even to the currency's minor unit; refunds with an \
            unknown amount are counted separately; reversed refunds are netted out. Currency and source are always \
            grouping columns: amounts are never summed across currencies, estimates never mixed with store amounts.
            Example: storerecon report refunds --from 2026-11-01 --to 2026-11-30 --by day,platform --format csv
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "First day (YYYY-MM-DD), inclusive.")
    var from: String

    @Option(name: .long, help: "Last day (YYYY-MM-DD), inclusive.")
    var to: String

    @Option(
        name: .long,
        help: "Group by any of day, platform, app, product, reason, currency, country, source (comma-separated).")
    var by: String = "day,platform"

    @Flag(name: .long, help: "One row per refund instead of groups.")
    var detail = false

    @Option(name: .long, help: "table, csv, json or html.")
    var format: ReportFormat = .table

    @Option(name: .long, help: "Write to this file (atomically) instead of stdout.")
    var output: String?

    @Option(name: .long, help: "Only this app.")
    var app: String?

    @Option(
        name: .long,
        help: "CSV date,currency,rate_to_<BASE> (from finance): add amounts converted to BASE at each day's rate.")
    var rates: String?

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
        case table, csv, json, html
    }

    func run() async throws {
        try await CommandRuntime.run(options, command: "report") { runtime in
            let apps = try runtime.apps(matching: app).map(\.id)
            let dimensions: [RefundReportOptions.Dimension]
            do {
                dimensions = try RefundReportOptions.parseDimensions(by)
            } catch let error as ReportError {
                throw ReconcilerError(.input, error.message)
            }
            var table: RefundRates?
            if let rates {
                guard let data = FileManager.default.contents(atPath: rates) else {
                    throw ReconcilerError(.input, "--rates \(rates): cannot read the file")
                }
                if detail { throw ReconcilerError(.input, "--rates applies to grouped reports, not --detail") }
                do {
                    table = try RefundRates.parse(String(decoding: data, as: UTF8.self))
                } catch let error as ReportError {
                    throw ReconcilerError(.input, error.message)
                }
            }
            let request = RefundReportOptions(
                from: from, to: to, by: dimensions, detail: detail, timeZone: runtime.configuration.reports.timeZone,
                apps: app == nil ? [] : apps, rates: table)
            let connection = try runtime.connect()
            defer { connection.close() }
            let report: RefundReport
            do {
                report = try RefundReport.run(request, on: connection)
            } catch let error as ReportError {
                throw ReconcilerError(.input, error.message)
            }
            let text: String
            switch format {
            case .table: text = report.table()
            case .csv: text = report.csv()
            case .json: text = try report.json()
            case .html: text = report.html()
            }
            if let output {
                let url = URL(fileURLWithPath: output)
                try Data(text.utf8).write(to: url, options: .atomic)
                runtime.logger.info("wrote \(format.rawValue) report to \(url.path)")
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }
}
