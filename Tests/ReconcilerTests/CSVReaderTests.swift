import Reconciler
import Testing

@Suite("CSVReader")
struct CSVReaderTests {
    func records(_ text: String) throws -> [CSVReader.Record] {
        var reader = CSVReader(bytes: Array(text.utf8))
        var out: [CSVReader.Record] = []
        while let record = try reader.next() { out.append(record) }
        return out
    }

    @Test func readsQuotedFieldsAndLineBreaks() throws {
        let text = "a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\"two\nlines\"\nplain,,end"
        let parsed = try records(text)
        #expect(
            parsed.map(\.fields) == [["a", "b", "c"], ["x,1", "say \"hi\"", "two\nlines"], ["plain", "", "end"]])
        #expect(parsed.map(\.line) == [1, 2, 4])
    }

    @Test func reportsMalformedRecordsWithTheirLineAndContinues() throws {
        var reader = CSVReader(bytes: Array("ok,1\nbad\"quote,2\nfine,3\n".utf8))
        #expect(try reader.next()?.fields == ["ok", "1"])
        let error = #expect(throws: CSVReader.Malformed.self) { try reader.next() }
        #expect(error?.line == 2)
        #expect(try reader.next()?.fields == ["fine", "3"])
        #expect(try reader.next() == nil)
    }

    @Test func unterminatedQuoteIsMalformed() {
        var reader = CSVReader(bytes: Array("\"never closed,1\n2,3\n".utf8))
        let error = #expect(throws: CSVReader.Malformed.self) { try reader.next() }
        #expect(error?.reason.contains("not closed") == true)
    }

    @Test func overlongFieldIsMalformedNotUnbounded() {
        var reader = CSVReader(
            bytes: Array(("x," + String(repeating: "y", count: 5000) + "\n").utf8), maxFieldBytes: 100)
        let error = #expect(throws: CSVReader.Malformed.self) { try reader.next() }
        #expect(error?.reason.contains("longer than 100") == true)
    }

    @Test func invalidUTF8IsMalformed() {
        var reader = CSVReader(bytes: [0x61, 0x2C, 0xFF, 0xFE, 0x0A])
        let error = #expect(throws: CSVReader.Malformed.self) { try reader.next() }
        #expect(error?.reason.contains("UTF-8") == true)
    }

    /// Property: any field list written per RFC 4180 reads back unchanged.
    @Test func roundTripsRandomFields() throws {
        var generator = SplitMix(seed: 42)
        let alphabet = Array("ab,\"\n\r x✓'\\;")
        for _ in 0..<300 {
            let rows = (0..<Int(generator.next() % 4 + 1)).map { _ in
                (0..<Int(generator.next() % 4 + 1)).map { _ in
                    String(
                        (0..<Int(generator.next() % 6)).map { _ in
                            alphabet[Int(generator.next() % UInt64(alphabet.count))]
                        })
                }
            }
            let text = rows.map { row in
                row.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: ",")
            }.joined(separator: "\r\n")
            #expect(try records(text).map(\.fields) == rows)
        }
    }
    /// Found by the hostile-input property test: an empty in-memory input trapped (index out of range).
    @Test func emptyInputHasNoRecords() throws {
        var reader = CSVReader(bytes: [])
        #expect(try reader.next() == nil)
        #expect(try reader.next() == nil)
    }
}

/// A small deterministic generator for property tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
