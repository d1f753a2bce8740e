import Reconciler
import TestSupport
import Testing

@testable import Reports

/// Found by the hostile-input tests: a field whose line break is "\r\n", or whose quote or comma carries a combining
/// mark, is one Character that equals none of `,` `"` `\n` `\r`, so it went out unquoted and split the record.
@Suite struct CSVFieldTests {
    static func readBack(_ fields: [String]) throws -> [String]? {
        let line = fields.map(RefundReport.csvField).joined(separator: ",") + "\r\n"
        var reader = CSVReader(bytes: Array(line.utf8))
        return try reader.next()?.fields
    }

    @Test func fieldsThatAreOneCharacterWithABreakOrQuoteRoundTrip() throws {
        let fields = ["a\r\nb", "\"\u{301}", ",\u{301}x", "x\"y", "plain", "", "\r\n"]
        #expect(try Self.readBack(fields) == fields)
    }

    @Test func hostileFieldsRoundTrip() throws {
        var input = HostileInput(seed: 4180)
        for index in 0..<2000 {
            let fields = (0..<input.int(1...5)).map { _ in input.hostileString(maxRun: 300) }
            #expect(try Self.readBack(fields) == fields, "case \(index)")
        }
    }
}
