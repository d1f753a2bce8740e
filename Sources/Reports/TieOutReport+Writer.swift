import Foundation
import Postgres
import StoreCalendar

extension TieOutReport {
    /// The formats a tie-out is written in.
    public enum Format: String, Sendable, CaseIterable {
        /// Aligned columns for a terminal.
        case table
        /// RFC 4180, the legend as trailing `# ` comment lines.
        case csv
        /// One object with a `legend`.
        case json
        /// One printable page.
        case html
    }

    /// Runs the tie-out and writes it to `output` as the lines come: CSV and JSON write each line (with `--detail`)
    /// as it is compared; a table reads the lines twice (once to measure its columns); HTML keeps only the lines it
    /// prints (those not matched, or every line with `--detail`). `output` is not finished here.
    /// - Returns: the report without its lines (totals, counts), for the command's log.
    /// - Throws: ``ReportError`` for a malformed month; `PostgresError`; an output that cannot be written.
    @discardableResult
    public static func write(
        month: CalendarMonth, apps: [String: String], detail: Bool, format: Format, on connection: PostgresConnection,
        to output: RefundReportOutput
    ) throws -> TieOutReport {
        switch format {
        case .csv:
            if detail { try output.write(csvRecord(detailColumns)) }
            let report = try scan(month: month, apps: apps, detail: detail, on: connection) { _, line in
                if detail { try output.write(csvRecord(cells(line))) }
            }
            try output.write(report.csvTail())
            return report
        case .json:
            try output.write(TieOutReport(month: month, detail: detail).jsonHead())
            var first = true
            let report = try scan(month: month, apps: apps, detail: detail, on: connection) { _, line in
                guard detail else { return }
                try output.write(jsonLine(line, first: first))
                first = false
            }
            try output.write(report.jsonTail())
            return report
        case .table:
            return try writeTable(month: month, apps: apps, detail: detail, on: connection, to: output)
        case .html:
            var kept: [Line] = []
            var report = try scan(month: month, apps: apps, detail: detail, on: connection) { _, line in
                if detail || line.status != .matched { kept.append(line) }
            }
            report.lines = kept
            try output.write(report.html())
            return report
        }
    }

    /// The table: with `--detail`, a first pass measures the columns and a second prints the lines.
    static func writeTable(
        month: CalendarMonth, apps: [String: String], detail: Bool, on connection: PostgresConnection,
        to output: RefundReportOutput
    ) throws -> TieOutReport {
        var widths = detailColumns.map(\.count)
        let right = rightAligned(detailColumns)
        try output.write(TieOutReport(month: month, detail: detail).tableTitle)
        var buffered = ""
        var headed = false
        let report = try scan(month: month, apps: apps, detail: detail, passes: detail ? 2 : 1, on: connection) {
            pass, line in
            guard detail else { return }
            if pass == 0 { return TextColumns.widen(&widths, cells(line)) }
            if !headed {
                buffered = TextColumns.line(detailColumns, widths: widths, right: right) + "\n"
                headed = true
            }
            buffered += TextColumns.line(cells(line), widths: widths, right: right) + "\n"
            if buffered.utf8.count > 1 << 16 {
                try output.write(buffered)
                buffered = ""
            }
        }
        if detail, report.lineCount == 0 {
            buffered = TextColumns.line(detailColumns, widths: widths, right: right) + "\n"
        }
        try output.write(buffered)
        try output.write(report.tableTail())
        return report
    }
}
