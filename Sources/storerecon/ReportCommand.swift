import ArgumentParser
import Foundation
import Postgres
import Reconciler
import Reports

/// `storerecon report`.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Reports for finance.",
        subcommands: [ReportRefundsCommand.self, ReportTieOutCommand.self, ReportRefundRequestsCommand.self]
    )
}

/// `storerecon report refunds --from DATE --to DATE [--by ...] [--basis ...] [--environment ...] [--detail]
/// [--rates FILE] [--format ...] [--output FILE]`.
struct ReportRefundsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refunds",
        abstract: "Refunds over a date range, grouped or one row per refund. Reads a snapshot; never writes.",
        discussion: """
            Dates are inclusive, in reports.timeZone (UTC unless configured). Amounts (gross, tax, net = gross - \
            tax) are printed in each currency's major units (10.99 USD, 1990 JPY): what the stores refunded \
            (source store) or estimates from configured prices (source configured), each refund rounded half to \
            even to the currency's minor unit, then added, so every total is the sum of the printed rows. A refund \
            stays in the period it is booked in; a reversal is a negative entry in its own period. Refunds with an \
            unknown amount are counted separately. Currency and source are always grouping columns: amounts are \
            never summed across currencies, estimates never mixed with store amounts.
            Example: storerecon report refunds --from 2026-11-01 --to 2026-11-30 --by day,platform --format csv
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "First day (YYYY-MM-DD), inclusive (or --month).")
    var from: String?

    @Option(name: .long, help: "Last day (YYYY-MM-DD), inclusive (or --month).")
    var to: String?

    @Option(name: .long, help: "A month (YYYY-MM) instead of --from and --to: its days in reports.timeZone.")
    var month: String?

    @Flag(
        name: .long,
        help:
            "With --month: the month as each store books it, as report tie-out does (Google: the US-Pacific calendar month; Apple: the fiscal month of its loaded FINANCIAL report)."
    )
    var storePeriods = false

    @Option(
        name: .long,
        help:
            "Group by any of day, platform, app, product, reason, currency, country, source, environment (comma-separated; default day,platform)."
    )
    var by: String?

    @Option(
        name: .long,
        help:
            "event: book each refund and reversal by when the store says it happened; recorded: by when storerecon first recorded it, so a closed month prints the same figures later."
    )
    var basis: String = "event"

    @Option(name: .long, help: "production (real money), sandbox (Apple test purchases) or all.")
    var environment: String = "production"

    @Flag(name: .long, help: "One row per refund and per reversal instead of groups, streamed (not with --by).")
    var detail = false

    @Option(name: .long, help: "table, csv, json or html (amounts in major units: 10.99 USD, 1990 JPY).")
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

        var format: RefundReport.Format {
            switch self {
            case .table: .table
            case .csv: .csv
            case .json: .json
            case .html: .html
            }
        }
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
            do {
                var request = try self.request(timeZone: runtime.configuration.reports.timeZone, apps: apps)
                let connection = try runtime.connect()
                defer { connection.close() }
                if storePeriods, let month {
                    let apple = try runtime.apps(matching: app).contains { $0.platform.rawValue == "apple" }
                    request = try Self.storeMonth(request, month: month, apple: apple, on: connection)
                }
                let sink = try output.map { try RefundReportOutput.file(atomicallyAt: $0) } ?? .standardOutput()
                do {
                    try RefundReport.write(request, format: format.format, on: connection, to: sink)
                    try sink.finish()
                } catch {
                    sink.discard()
                    throw error
                }
                if let output { runtime.logger.info("wrote \(format.rawValue) report to \(output)") }
            } catch let error as ReportError {
                throw Self.failure(error)
            }
        }
    }

    /// The request the options describe, its rates file read.
    /// - Throws: `ReportError`: a request error for the options, an input error for the rates file.
    func request(timeZone: String, apps: [String]) throws -> RefundReportOptions {
        let (from, to) = try range()
        var request = RefundReportOptions(
            from: from, to: to, by: try RefundReportOptions.parseDimensions(by ?? "day,platform"), detail: detail,
            timeZone: timeZone, apps: app == nil ? [] : apps, basis: try RefundReportOptions.parseBasis(basis),
            environment: try RefundReportOptions.parseEnvironment(environment))
        try request.validate()
        if let rates {
            // The file's content is input data (exit 1), not the command line.
            guard let data = FileManager.default.contents(atPath: rates) else {
                throw ReportError("--rates \(rates): cannot read the file", code: .input)
            }
            request.rates = try RefundRates.parse(String(decoding: data, as: UTF8.self))
        }
        return request
    }

    /// The exit a report error ends with: 64 for the request, 78 for the configuration, 1 for an input file (a
    /// missing rate included) or an output that cannot be written.
    static func failure(_ error: ReportError) -> ReconcilerError {
        switch error.code {
        case .request: ReconcilerError(.usage, error.message)
        case .input: ReconcilerError(.input, error.message)
        case .configuration: ReconcilerError(.configuration, error.message)
        case .failed: ReconcilerError(.failed, error.message)
        }
    }
}

extension ReportRefundsCommand {
    /// `--from`/`--to`, or the calendar month of `--month`.
    /// - Throws: `ReportError` when neither or both are given, or `--store-periods` without `--month`.
    func range() throws -> (String, String) {
        if storePeriods, month == nil { throw ReportError("--store-periods needs --month YYYY-MM") }
        if let month {
            guard from == nil, to == nil else {
                throw ReportError("--month replaces --from and --to: give one or the other")
            }
            let month = try StorePeriods.month(option: month)
            return (month.firstDay.description, month.lastDay.description)
        }
        guard let from, let to else { throw ReportError("give --from and --to, or --month YYYY-MM") }
        return (from, to)
    }

    /// `request` over `month` as each store books it.
    /// - Throws: `ReportError` (a request error) when Apple apps are reported and no Apple report of the month is
    ///   loaded: its fiscal period is unknown.
    static func storeMonth(
        _ request: RefundReportOptions, month: String, apple: Bool, on connection: PostgresConnection
    ) throws -> RefundReportOptions {
        let periods = try StorePeriods.resolve(month: StorePeriods.month(option: month), on: connection)
        if apple, periods.apple == nil {
            throw ReportError(
                "--store-periods: no Apple FINANCIAL report is loaded for \(month), so its fiscal period is unknown; "
                    + "run storerecon sync payouts --month \(month) first (or --app for a Google app)")
        }
        var options = RefundReportOptions.storeMonth(
            periods, by: request.by, detail: request.detail, apps: request.apps, basis: request.basis,
            environment: request.environment)
        options.rates = request.rates
        return options
    }
}
