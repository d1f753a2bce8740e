import Foundation
import Postgres

extension RefundReport {
    /// The formats a report is written in.
    public enum Format: String, Sendable, CaseIterable {
        /// Fixed-width columns for a terminal.
        case table
        /// RFC 4180, for spreadsheets.
        case csv
        /// For pipelines.
        case json
        /// One self-contained page with a chart, for people.
        case html
    }

    /// Runs the report and writes it to `output` as it is produced. A grouped report is small and rendered whole; a
    /// `--detail` report is streamed from a cursor, a chunk of rows at a time, in every format, so memory stays flat
    /// however many refunds the range holds. `output` is not finished here (see ``RefundReportOutput/finish()``).
    /// - Throws: `ReportError` for a bad request, a missing rate or an output that cannot be written.
    public static func write(
        _ options: RefundReportOptions, format: Format, on connection: PostgresConnection, to output: RefundReportOutput
    ) throws {
        guard options.detail else {
            let report = try run(options, on: connection, money: format == .html)
            switch format {
            case .table: try output.write(report.table())
            case .csv: try output.write(report.csv())
            case .json: try output.write(try report.json())
            case .html: try output.write(report.html())
            }
            return
        }
        try inSnapshot(options, on: connection) {
            let report = try summary(options, on: connection, money: format == .html)
            switch format {
            case .table: try report.streamTable(on: connection, to: output)
            case .csv: try report.streamCSV(on: connection, to: output)
            case .json: try report.streamJSON(on: connection, to: output)
            case .html: try report.streamHTML(on: connection, to: output)
            }
        }
    }

    func streamCSV(on connection: PostgresConnection, to output: RefundReportOutput) throws {
        try output.write(Self.csvLine(Self.detailColumns))
        try Self.streamDetails(options, on: connection) { detail in
            try output.write(Self.csvLine(Self.cells(detail).map(\.plain)))
        }
    }

    /// Two passes over the same snapshot: the first measures the columns, the second prints them.
    func streamTable(on connection: PostgresConnection, to output: RefundReportOutput) throws {
        var widths = Self.detailColumns.map(\.count)
        var rows = 0
        var google = false
        try Self.streamDetails(options, on: connection) { detail in
            Self.widen(&widths, Self.cells(detail).map(\.plain))
            rows += 1
            google = google || detail.platform == .google
        }
        try output.write(tableTitle + "\n" + Self.padded(Self.detailColumns, widths) + "\n")
        try Self.streamDetails(options, on: connection) { detail in
            try output.write(Self.padded(Self.cells(detail).map(\.plain), widths) + "\n")
        }
        if rows == 0 { try output.write("(no refunds from \(options.from) to \(options.to))\n") }
        if google || rows == 0 { try output.write(Self.googleCoverage + "\n") }
        try output.write(unknownAmountLine + "\n")
    }

    /// The request's fields first, then `refunds`: one object per line, every column present (`null` when unknown).
    func streamJSON(on connection: PostgresConnection, to output: RefundReportOutput) throws {
        let header = jsonHeader
        var text = "{\n"
        for key in header.keys.sorted() {
            let value = try JSONSerialization.data(withJSONObject: header[key]!, options: [.fragmentsAllowed])
            text += "  \(JSONText.string(key)): \(String(decoding: value, as: UTF8.self)),\n"
        }
        try output.write(text + "  \"refunds\": [")
        var first = true
        try Self.streamDetails(options, on: connection) { detail in
            try output.write((first ? "\n    " : ",\n    ") + Self.jsonLine(Self.cells(detail)))
            first = false
        }
        try output.write(first ? "]\n}\n" : "\n  ]\n}\n")
    }

    func streamHTML(on connection: PostgresConnection, to output: RefundReportOutput) throws {
        // One row per refund has more columns than a screen is wide: this table alone scrolls.
        try output.write(htmlHead(title: "Refunds") + "<div class=\"wide\">" + htmlTableHead(Self.detailColumns))
        var rows = 0
        try Self.streamDetails(options, on: connection) { detail in
            try output.write(htmlRow(Self.cells(detail).map(\.plain), columns: Self.detailColumns))
            rows += 1
        }
        if rows == 0 { try output.write(htmlEmptyRow(columns: Self.detailColumns.count)) }
        try output.write("</tbody></table></div>\n</body></html>\n")
    }

    /// JSON text written by hand for streamed rows (JSONSerialization would build every row as objects first).
    enum JSONText {
        /// `text` as a JSON string literal.
        static func string(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
    }
}
