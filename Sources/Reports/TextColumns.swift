import Foundation

/// Plain-text tables for a terminal: each column as wide as its widest cell, two spaces between columns, trailing
/// spaces dropped. Used by the tie-out report and `quarantine list`.
public enum TextColumns {
    /// The rows (the first is the header) as aligned lines, each ending in a newline.
    public static func align(_ rows: [[String]]) -> String {
        guard let header = rows.first else { return "" }
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index < widths.count ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0) : cell
            }
            .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + "\n"
    }
}
