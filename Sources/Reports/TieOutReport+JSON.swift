import Foundation
import StoreCalendar

extension TieOutReport {
    /// One object of `columns` and `cells`: counts as JSON numbers, amounts as exact decimal strings (major units),
    /// an empty cause as `null`.
    static func jsonObject(_ columns: [String], _ cells: [String]) -> String {
        var text = "{"
        for (index, column) in columns.enumerated() {
            if index > 0 { text += ", " }
            text += RefundReport.JSONText.string(column) + ": "
            let cell = cells[index]
            if countColumns.contains(column), let number = Int(cell) {
                text += String(number)
            } else if column == "cause", cell.isEmpty {
                text += "null"
            } else {
                text += RefundReport.JSONText.string(cell)
            }
        }
        return text + "}"
    }

    /// `"lines": [` opening the lines (with `--detail`), after the month.
    func jsonHead() -> String {
        "{\n  \"month\": \(RefundReport.JSONText.string(month.description)),\n" + (detail ? "  \"lines\": [" : "")
    }

    /// One detail line inside `lines`.
    static func jsonLine(_ line: Line, first: Bool) -> String {
        (first ? "\n    " : ",\n    ") + jsonObject(detailColumns, cells(line))
    }

    /// Everything after the lines: counts, totals, totals by cause, payout costs, reports, missing reports and the
    /// legend; closes the object.
    func jsonTail() -> String {
        func array(_ objects: [String]) -> String {
            objects.isEmpty ? "[]" : "[\n    " + objects.joined(separator: ",\n    ") + "\n  ]"
        }
        let string = RefundReport.JSONText.string
        var fields: [String] = [
            "\"line_count\": \(lineCount)", "\"differing\": \(differing)", "\"without_cause\": \(withoutCause)",
            "\"totals\": " + array(totals.map { Self.jsonObject(Self.totalColumns, Self.cells($0)) }),
            "\"cause_totals\": " + array(causeTotals.map { Self.jsonObject(Self.causeColumns, Self.cells($0)) }),
            "\"payout_costs\": " + array(payoutCosts.map { Self.jsonObject(Self.costColumns, Self.cells($0)) }),
            "\"reports\": "
                + array(
                    reports.map {
                        "{\"store\": \(string($0.store)), \"app\": \(string($0.app)), "
                            + "\"period_start\": \(string($0.periodStart)), \"period_end\": \(string($0.periodEnd)), "
                            + "\"source_name\": \(string($0.sourceName)), \"rows\": \($0.rows)}"
                    }),
            "\"missing_reports\": [" + missingReports.map(string).joined(separator: ", ") + "]",
        ]
        let statuses = TieOut.Status.allCases.map { "\(string($0.rawValue)): \(string($0.meaning))" }
        let causes = TieOut.Cause.allCases.map { "\(string($0.rawValue)): \(string($0.meaning))" }
        fields.append(
            "\"legend\": {\"statuses\": {\n    " + statuses.joined(separator: ",\n    ") + "\n  }, \"causes\": {\n    "
                + causes.joined(separator: ",\n    ") + "\n  }}")
        return (detail ? "\n  ],\n  " : "  ") + fields.joined(separator: ",\n  ") + "\n}\n"
    }

    /// JSON: the month, the lines (with `--detail`), counts, totals, totals by cause, payout costs, the reports used
    /// and the legend.
    public func json() throws -> String {
        var text = jsonHead()
        for (index, line) in lines.enumerated() where detail { text += Self.jsonLine(line, first: index == 0) }
        return text + jsonTail()
    }
}
