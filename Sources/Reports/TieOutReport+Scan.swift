import Foundation
import Postgres
import StoreCalendar

extension TieOutReport {
    /// Runs the tie-out in one read-only snapshot, calling `body` with each line as it comes (pass 0, then pass 1
    /// and so on when `passes` asks to read the lines again, as a table measuring its columns does), and returns the
    /// report's totals, payout costs and reports, without lines. Memory does not grow with the number of orders.
    /// - Throws: ``ReportError`` for a malformed month; `PostgresError`; what `body` throws.
    public static func scan(
        month: CalendarMonth, apps: [String: String], detail: Bool, passes: Int = 1, on connection: PostgresConnection,
        _ body: (Int, Line) throws -> Void
    ) throws -> TieOutReport {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { _ = try? connection.execute("ROLLBACK") }
        var report = TieOutReport(month: month, detail: detail)
        var tally = Tally()
        var ready: [(app: String, store: String, reports: [SourceReport])] = []
        for (app, store) in apps.sorted(by: { $0.key < $1.key }) {
            let reports = try sourceReports(app: app, store: store, month: month, on: connection)
            if reports.isEmpty {
                report.missingReports.append(app)
            } else {
                ready.append((app, store, reports))
                report.reports += reports
                report.payoutCosts += try payoutCosts(app: app, store: store, month: month, on: connection)
            }
        }
        for pass in 0..<max(passes, 1) {
            for (app, store, reports) in ready {
                try lines(app: app, store: store, reports: reports, month: month, on: connection) { line in
                    if pass == 0 { tally.add(line) }
                    try body(pass, line)
                }
            }
        }
        (report.totals, report.causeTotals) = (tally.totals, tally.causeTotals)
        (report.lineCount, report.differing, report.withoutCause) = (tally.lines, tally.differing, tally.withoutCause)
        return report
    }

    /// The lines of one app, Google's streamed from a cursor, Apple's (a few hundred keys) read whole.
    static func lines(
        app: String, store: String, reports: [SourceReport], month: CalendarMonth, on connection: PostgresConnection,
        _ body: (Line) throws -> Void
    ) throws {
        if store == "google" {
            var context = try googleContext(app: app, on: connection)
            context.nextMonthLoaded = try !sourceReports(app: app, store: store, month: month.next, on: connection)
                .isEmpty
            try GoogleTieOut(
                app: app, periods: StorePeriods(month: month, apple: nil), context: context, connection: connection
            ).scan(body)
        } else if let period = reports.first {
            let periods = StorePeriods(month: month, apple: (period.periodStart, period.periodEnd))
            for line in try AppleTieOut(app: app, periods: periods, connection: connection).lines() { try body(line) }
        }
    }

    /// Where the app's Google history begins (its first voided sync, less the 30 days Google keeps) and its gaps.
    static func googleContext(app: String, on connection: PostgresConnection) throws -> GoogleTieOut.Context {
        let start: Date? = try connection.query(
            """
            SELECT min(started_at) - interval '30 days' AS start FROM job_run
            WHERE app_id = $1 AND job IN ('google_voided', 'google_voided_backfill')
            """, [app])[0].decodeIfPresent("start")
        let gaps = try connection.query(
            """
            SELECT id, gap_from, gap_to FROM sync_gap
            WHERE app_id = $1 AND job IN ('google_voided', 'google_voided_backfill') ORDER BY gap_from
            """, [app]
        ).map { row in
            GoogleTieOut.Gap(id: try row.decode("id"), from: try row.decode("gap_from"), to: try row.decode("gap_to"))
        }
        return GoogleTieOut.Context(historyStart: start, gaps: gaps)
    }

    static func sourceReports(
        app: String, store: String, month: CalendarMonth, on connection: PostgresConnection
    ) throws -> [SourceReport] {
        try connection.query(
            """
            SELECT store, app_id, period_start::text AS period_start, period_end::text AS period_end, source_name,
                   row_count
            FROM payout_report WHERE app_id = $1 AND store = $2 AND month = $3 ORDER BY report_key
            """, [app, store, month]
        ).map { row in
            SourceReport(
                store: try row.decode("store"), app: try row.decode("app_id"),
                periodStart: try row.decode("period_start"), periodEnd: try row.decode("period_end"),
                sourceName: try row.decode("source_name"), rows: try row.decode("row_count"))
        }
    }

    static func payoutCosts(
        app: String, store: String, month: CalendarMonth, on connection: PostgresConnection
    ) throws -> [PayoutCost] {
        let kinds = store == "google" ? ["Charge refund", "Google fee refund", "Tax refund"] : ["R"]
        return try connection.query(
            """
            SELECT r.merchant_currency AS currency, (-sum(r.merchant_nanos))::text AS nanos
            FROM payout_report p JOIN payout_report_row r ON r.report_id = p.id
            WHERE p.app_id = $1 AND p.store = $2 AND p.month = $3 AND r.kind = ANY ($4::text[])
                  AND r.merchant_currency IS NOT NULL
                  AND (r.package IS NULL OR r.package = (SELECT a.store_app_id FROM app a WHERE a.id = $1))
            GROUP BY 1 ORDER BY 1
            """, [app, store, month, PostgresTextArray(kinds)]
        ).map { row in
            PayoutCost(
                store: store, app: app, currency: try row.decode("currency"),
                nanos: try RefundReport.nanos(row, "nanos") ?? 0)
        }
    }

    /// Totals kept as the lines stream by: per store and currency, and per store, currency, status and cause.
    struct Tally {
        /// A line's store, currency, status and cause.
        struct Key: Hashable {
            var store: String
            var currency: String
            var status: TieOut.Status?
            var cause: TieOut.Cause?
        }

        /// An exact sum of nanos: added as integers, carried into a `Decimal` only before an integer could overflow
        /// (a million lines are added without a `Decimal` operation each).
        struct Sum {
            private var carried: Decimal = 0
            private var partial: Int64 = 0

            mutating func add(_ nanos: Int64) {
                let (sum, overflow) = partial.addingReportingOverflow(nanos)
                if overflow || sum.magnitude > 1 << 62 {
                    carried += Decimal(partial) + Decimal(nanos)
                    partial = 0
                } else {
                    partial = sum
                }
            }

            var value: Decimal { carried + Decimal(partial) }
        }

        /// One key's counts and sums.
        struct Counts {
            var lines = 0
            var matched = 0
            var ledger = Sum()
            var report = Sum()
        }

        private var counts: [Key: Counts] = [:]
        var lines = 0
        var differing = 0
        var withoutCause = 0

        mutating func add(_ line: Line) {
            lines += 1
            if line.status != .matched {
                differing += 1
                if line.cause == nil { withoutCause += 1 }
            }
            let ledger = line.ledgerNanos.map { TieOutAmount.rounded($0, line.currency) } ?? 0
            let report = line.reportNanos.map { TieOutAmount.rounded($0, line.currency) } ?? 0
            for key in [
                Key(store: line.store, currency: line.currency, status: nil, cause: nil),
                Key(store: line.store, currency: line.currency, status: line.status, cause: line.cause),
            ] {
                var entry = counts[key] ?? Counts()
                entry.lines += 1
                if line.status == .matched { entry.matched += 1 }
                entry.ledger.add(ledger)
                entry.report.add(report)
                counts[key] = entry
            }
        }

        var totals: [Total] {
            counts.filter { $0.key.status == nil }.map { key, entry in
                Total(
                    store: key.store, currency: key.currency, lines: entry.lines, matched: entry.matched,
                    differing: entry.lines - entry.matched, ledgerNanos: entry.ledger.value,
                    reportNanos: entry.report.value)
            }.sorted { ($0.store, $0.currency) < ($1.store, $1.currency) }
        }

        var causeTotals: [CauseTotal] {
            counts.compactMap { key, entry in
                key.status.map { status in
                    CauseTotal(
                        store: key.store, currency: key.currency, status: status, cause: key.cause,
                        lines: entry.lines, ledgerNanos: entry.ledger.value, reportNanos: entry.report.value)
                }
            }.sorted {
                ($0.store, $0.currency, $0.status.rawValue, $0.cause?.rawValue ?? "")
                    < ($1.store, $1.currency, $1.status.rawValue, $1.cause?.rawValue ?? "")
            }
        }
    }
}
