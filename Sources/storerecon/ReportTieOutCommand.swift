import ArgumentParser
import Foundation
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
            period. Each line is matched, amount_differs, ledger_only, report_only (Google) or differs (Apple), \
            with a cause where one is known. Exit 0 whatever the differences: they are findings. Load the reports \
            first with sync payouts or import payouts.
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
    }

    func run() async throws {
        try await CommandRuntime.run(options, command: "report tie-out") { runtime in
            let apps = try runtime.apps(matching: app)
            let connection = try runtime.connect()
            defer { connection.close() }
            try Migrator(connection: connection).verifyCurrent()
            let report: TieOutReport
            do {
                report = try TieOutReport.run(
                    month: month, apps: Dictionary(uniqueKeysWithValues: apps.map { ($0.id, $0.platform.rawValue) }),
                    detail: detail, on: connection)
            } catch let error as ReportError {
                throw ReconcilerError(.usage, error.message)
            }
            for missing in report.missingReports {
                runtime.logger.warning("no financial report loaded for \(missing) in \(month): run sync payouts")
            }
            let text: String
            switch format {
            case .table: text = report.table()
            case .csv: text = report.csv()
            case .json: text = try report.json()
            case .html: text = report.html()
            }
            if let output {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw ReconcilerError(
                        .failed, "--output \(output): cannot write the report (\(Self.reason(error)))")
                }
                runtime.logger.info("wrote \(format.rawValue) tie-out to \(output)")
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
            runtime.logger.info("tie-out \(month): \(report.lines.count) lines, \(report.differing) not matched")
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
