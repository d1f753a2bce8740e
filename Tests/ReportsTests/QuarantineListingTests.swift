import Foundation
import Ledger
import Reports
import Testing

@Suite("quarantine list: aligned, with the drop reason, times to the millisecond")
struct QuarantineListingTests {
    static let seen = Date(timeIntervalSince1970: 1_795_000_000.123_456)

    static func entry(_ id: Int64, app: String, key: String?, resolution: String? = nil, note: String? = nil)
        -> QuarantineEntry
    {
        QuarantineEntry(
            id: id, app: app, job: "google_voided", naturalKey: key, reason: "voidedQuantity: -1 is not a quantity",
            sqlState: nil, quarantinedAt: seen, lastSeenAt: seen, seenCount: 1, resolution: resolution,
            resolutionNote: note, raw: "{}")
    }

    static let entries = [
        entry(7, app: "acme-android", key: "GPA.3316-0000-0000-00139"),
        entry(1234, app: "b", key: nil, resolution: "dropped", note: "test order from QA"),
    ]

    @Test func columnsLineUpAndADroppedRowSaysWhy() throws {
        let lines = QuarantineListing.table(Self.entries).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        for column in ["app", "job", "key", "last seen", "state", "note", "reason"] {
            let header = try #require(lines[0].range(of: column)).lowerBound.utf16Offset(in: lines[0])
            let starts = lines.dropFirst().map { line in
                line.index(line.startIndex, offsetBy: header, limitedBy: line.endIndex).map { index in
                    index == line.startIndex || line[line.index(before: index)] == " " && line[index] != " "
                } ?? false
            }
            #expect(starts == [true, true], "column \(column) does not start at the same place on every line")
        }
        #expect(lines[2].contains("dropped") && lines[2].contains("test order from QA"))
        #expect(lines[1].contains("open"))
        #expect(lines[1].contains("2026-11-18T11:06:40.123Z"), "\(lines[1])")
    }

    @Test func jsonTimesHaveMilliseconds() throws {
        let json = try QuarantineListing.json(Self.entries)
        #expect(json.contains(#""lastSeenAt" : "2026-11-18T11:06:40.123Z""#), "\(json)")
        #expect(json.contains(#""resolutionNote" : "test order from QA""#))
    }

    @Test func nothingToShowIsSaid() {
        #expect(QuarantineListing.table([]) == "no quarantined rows\n")
    }
}
