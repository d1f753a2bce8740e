import Foundation
import Ledger
import Postgres

/// `storerecon quarantine list`: the rows set aside, as an aligned table or JSON, times to the millisecond.
///
/// The table shows each row's state and, for a resolved one, why (`note`: the operator's reason for a drop, or how
/// it landed), before the reason it was quarantined; the reason comes last because it is the longest. A key longer
/// than 40 characters is cut (the JSON has it whole, with the raw row).
public enum QuarantineListing {
    /// The table, or a line saying there is nothing to show.
    public static func table(_ entries: [QuarantineEntry]) -> String {
        guard !entries.isEmpty else { return "no quarantined rows\n" }
        let header = ["id", "app", "job", "key", "seen", "last seen", "state", "note", "reason"]
        return TextColumns.align(
            [header]
                + entries.map { entry in
                    [
                        String(entry.id), entry.app, entry.job, entry.naturalKey.map { clip($0, 40) } ?? "-",
                        String(entry.seenCount), PostgresTimestamp.millis(entry.lastSeenAt), entry.resolution ?? "open",
                        entry.resolutionNote.map { oneLine(clip($0, 60)) } ?? "-", oneLine(entry.reason),
                    ]
                })
    }

    /// Every field of every row, the raw row included.
    public static func json(_ entries: [QuarantineEntry]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(PostgresTimestamp.millis(date))
        }
        return String(decoding: try encoder.encode(entries), as: UTF8.self) + "\n"
    }

    private static func clip(_ text: String, _ count: Int) -> String {
        text.count > count ? String(text.prefix(count - 3)) + "..." : text
    }

    private static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
    }
}
