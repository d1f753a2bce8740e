import Foundation

/// Plain-text tables for a terminal: each column as wide as its widest cell, two spaces between columns, trailing
/// spaces dropped. Used by the tie-out report and `quarantine list`.
public enum TextColumns {
    /// The rows (the first is the header) as aligned lines, each ending in a newline; the columns in `right` (by
    /// index: amounts and counts) aligned right.
    public static func align(_ rows: [[String]], right: Set<Int> = []) -> String {
        guard let header = rows.first else { return "" }
        var widths = header.map(\.count)
        for row in rows { widen(&widths, row) }
        return rows.map { line($0, widths: widths, right: right) }.joined(separator: "\n") + "\n"
    }

    /// Widens `widths` to fit `row`.
    public static func widen(_ widths: inout [Int], _ row: [String]) {
        for (index, cell) in row.enumerated() where index < widths.count {
            widths[index] = max(widths[index], cell.count)
        }
    }

    /// One row padded to `widths` (without a newline).
    public static func line(_ row: [String], widths: [Int], right: Set<Int> = []) -> String {
        row.enumerated().map { index, cell in
            guard index < widths.count, cell.count < widths[index] else { return cell }
            let pad = String(repeating: " ", count: widths[index] - cell.count)
            return right.contains(index) ? pad + cell : cell + pad
        }
        .joined(separator: "  ").trimmingTrailingSpaces()
    }
}

extension String {
    /// The text without trailing spaces; leading ones stay, so a row whose first cell is empty keeps its columns.
    func trimmingTrailingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
