import ArgumentParser
import Foundation
import Reconciler
import Reports
import StoreCalendar

/// `storerecon report refund-requests --from DATE --to DATE [--by ...] [--environment ...] [--detail]
/// [--format table|csv|json|html] [--output FILE]`.
struct ReportRefundRequestsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refund-requests",
        abstract: "The stores' refund requests over a date range, grouped or one row per request. Never writes.",
        discussion: """
            Requests received from --from to --to inclusive (days in reports.timeZone, UTC unless configured). \
            Grouped: requests, answered (in time), missed, no_facts, no_consent, not_supported, failed (the store refused the body), open (not decided \
            yet), and what the stores decided (refunded, declined, pending); the totals line is the sum of the \
            groups. --detail: one row per request with its store, app, request id, transaction or order id, \
            product, country, received time and deadline, rule, preference sent, answer, decision and its money. \
            The money refunded (the ledger's refunds of the request's purchase) and kept (its price where the store \
            declined, when known) follows per currency; an unknown amount is counted as unknown, never as 0. \
            Apps configured with an Apple test environment are left out unless --environment sandbox or all.
            Example: storerecon report refund-requests --from 2026-07-01 --to 2026-07-31 --by platform,rule --format csv
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "First day (YYYY-MM-DD, in reports.timeZone), inclusive.")
    var from: String

    @Option(name: .long, help: "Last day (YYYY-MM-DD, in reports.timeZone), inclusive.")
    var to: String

    @Option(
        name: .long,
        help: "Group by any of app, platform, rule, product, country, outcome (comma-separated; default platform).")
    var by: String?

    @Flag(name: .long, help: "One row per request instead of groups (not with --by).")
    var detail = false

    @Option(
        name: .long,
        help: "production (default: Google's and Apple's production apps), sandbox (Apple's sandbox apps) or all.")
    var environment: String = "production"

    @Option(
        name: .long,
        help:
            "table, csv, json or html (with a chart of requests per day by outcome; per week, month or year over longer ranges)."
    )
    var format: String = "table"

    @Option(name: .long, help: "Write to this file (replaced whole when done) instead of standard output.")
    var output: String?

    func run() async throws {
        try await CommandRuntime.run(options, command: "report") { runtime in
            let timeZone = runtime.configuration.reports.timeZone
            for (option, day) in [("--from", from), ("--to", to)] where CivilDate(iso: day) == nil {
                throw ReconcilerError(.usage, "\(option) \(day): expected a day YYYY-MM-DD")
            }
            guard let (start, end, days) = RefundRequestReport.days(from, to, timeZone: timeZone) else {
                throw ReconcilerError(.usage, "--from \(from) is after --to \(to)")
            }
            if detail, by != nil { throw ReconcilerError(.usage, "--detail cannot be grouped with --by") }
            let dimensions = try self.dimensions()
            guard ["table", "csv", "json", "html"].contains(format), !(detail && format == "html") else {
                throw ReconcilerError(.usage, "--format: expected table, csv, json or html (html not with --detail)")
            }
            let filter: RefundReportOptions.EnvironmentFilter
            do {
                filter = try RefundReportOptions.parseEnvironment(environment)
            } catch let error as ReportError {
                throw ReportRefundsCommand.failure(error)
            }
            let connection = try runtime.connect()
            defer { connection.close() }
            do {
                try RefundReport.checkTimeZone(timeZone, on: connection)
            } catch let error as ReportError {
                throw ReportRefundsCommand.failure(error)
            }
            // The counts, the money and the chart are read in one snapshot, so a run answering meanwhile cannot
            // make them disagree.
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let text: String
            if detail {
                text = try RefundRequestReport.renderDetail(
                    RefundRequestReport.detail(
                        from: start, to: end, environment: filter, on: connection), format: format)
            } else {
                let report = try RefundRequestReport.gather(
                    from: start, to: end, by: dimensions, environment: filter, on: connection)
                text =
                    format == "html"
                    ? report.html(
                        daily: try RefundRequestReport.daily(
                            from: start, to: end, timeZone: timeZone, environment: filter,
                            on: connection),
                        days: days, title: "Refund requests \(from) to \(to)")
                    : try report.render(format)
            }
            try connection.execute("ROLLBACK")
            let sink = try output.map { try RefundReportOutput.file(atomicallyAt: $0) } ?? .standardOutput()
            do {
                try sink.write(text)
                try sink.finish()
            } catch {
                sink.discard()
                throw error
            }
            if let output { runtime.logger.info("wrote \(format) refund-requests report to \(output)") }
        }
    }

    /// The `--by` dimensions (default `platform`).
    func dimensions() throws -> [RefundRequestReport.Dimension] {
        try (by ?? "platform").split(separator: ",").map { name in
            guard let dimension = RefundRequestReport.Dimension(rawValue: String(name)) else {
                throw ReconcilerError(.usage, "--by \(name): expected app, platform, rule, product, country or outcome")
            }
            return dimension
        }
    }
}
