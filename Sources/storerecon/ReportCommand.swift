import ArgumentParser
import Foundation
import Reconciler
import Reports

/// `storerecon report`.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Reports for finance.",
        subcommands: [ReportRefundsCommand.self, ReportTieOutCommand.self]
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
        help:
            "Group by any of day, platform, app, product, reason, currency, country, source (comma-separated; default day,platform)."
    )
    var by: String?

    @Flag(name: .long, help: "One row per refund instead of groups (not with --by).")
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
            if detail, by != nil {
                throw ReconcilerError(.usage, "--detail lists one row per refund; it cannot be grouped with --by")
            }
            if detail, rates != nil {
                throw ReconcilerError(.usage, "--rates applies to grouped reports, not --detail")
            }
            let dimensions: [RefundReportOptions.Dimension]
            var request: RefundReportOptions
            do {
                dimensions = try RefundReportOptions.parseDimensions(by ?? "day,platform")
                request = RefundReportOptions(
                    from: from, to: to, by: dimensions, detail: detail,
                    timeZone: runtime.configuration.reports.timeZone, apps: app == nil ? [] : apps)
                try request.validate()
            } catch let error as ReportError {
                throw ReconcilerError(.usage, error.message)
            }
            if let rates {
                // The file's content is input data (exit 1), not the command line.
                guard let data = FileManager.default.contents(atPath: rates) else {
                    throw ReconcilerError(.input, "--rates \(rates): cannot read the file")
                }
                do {
                    request.rates = try RefundRates.parse(String(decoding: data, as: UTF8.self))
                } catch let error as ReportError {
                    throw ReconcilerError(.input, error.message)
                }
            }
            let connection = try runtime.connect()
            defer { connection.close() }
            let report: RefundReport
            do {
                report = try RefundReport.run(request, on: connection)
            } catch let error as ReportError {
                throw ReconcilerError(.configuration, error.message)
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
                do {
                    try Data(text.utf8).write(to: url, options: .atomic)
                } catch {
                    throw ReconcilerError(
                        .failed, "--output \(output): cannot write the report (\(Self.reason(error)))")
                }
                runtime.logger.info("wrote \(format.rawValue) report to \(url.path)")
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }

    /// The operating system's reason for a failed file write, as one short phrase.
    static func reason(_ error: any Error) -> String {
        var current = error as NSError
        while let underlying = current.userInfo[NSUnderlyingErrorKey] as? NSError { current = underlying }
        if current.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(current.code))) }
        switch (error as NSError).code {
        case CocoaError.fileWriteNoPermission.rawValue: return "permission denied"
        case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileWriteInvalidFileName.rawValue:
            return "no such directory"
        case CocoaError.fileWriteOutOfSpace.rawValue: return "no space left on the device"
        case CocoaError.fileWriteVolumeReadOnly.rawValue: return "read-only file system"
        default: return "error \((error as NSError).code)"
        }
    }
}
