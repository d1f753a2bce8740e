import Foundation
import Payouts
import Postgres
import Reports

/// `storerecon payouts list`: the financial reports as an aligned table or JSON, times to the millisecond.
///
/// The table shows a file by its last path component and a checksum by its first 12 hex digits (enough to tell two
/// files apart by eye); the JSON has both whole. The drop's reason comes last because it is the longest.
enum PayoutsListing {
    /// The table, or a line saying there is nothing to show.
    static func table(_ entries: [PayoutReportEntry]) -> String {
        guard !entries.isEmpty else { return "no financial reports loaded (storerecon sync payouts, import payouts)\n" }
        let header = [
            "id", "app", "store", "month", "period", "file", "checksum", "rows", "loaded at", "dropped", "reason",
        ]
        return TextColumns.align(
            [header]
                + entries.map { entry in
                    [
                        String(entry.id), entry.app, entry.store.rawValue, entry.month.description,
                        "\(entry.periodStart)..\(entry.periodEnd)",
                        String(entry.sourceName.split(separator: "/").last ?? Substring(entry.sourceName)),
                        String(entry.checksum.prefix(12)), String(entry.rows), time(entry.loadedAt),
                        entry.droppedAt.map(time) ?? "-", entry.dropReason.map(oneLine) ?? "-",
                    ]
                })
    }

    /// Every field of every report.
    static func json(_ entries: [PayoutReportEntry]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(time(date))
        }
        return String(decoding: try encoder.encode(entries), as: UTF8.self) + "\n"
    }

    /// A time as every command prints it (UTC, to the millisecond).
    static func time(_ date: Date) -> String { PostgresTimestamp.millis(date) }

    private static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
    }
}
