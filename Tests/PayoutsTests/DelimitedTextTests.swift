import Foundation
import Testing

@testable import Payouts

/// Fields read in place or copied: the values are the same either way.
@Suite struct DelimitedTextTests {
    func records(_ text: String, separator: UInt8 = 0x2C, quoting: Bool = true) throws -> [[String]] {
        var records: [[String]] = []
        try DelimitedText(Data(text.utf8), separator: separator, quoting: quoting, file: "t.csv").forEachRecord {
            records.append($0.fields)
        }
        return records
    }

    @Test func plainQuotedEscapedAndTailedFieldsReadTheirValues() throws {
        let text = "a,\"b, c\",\"say \"\"hi\"\"\",\"x\"tail,\"\"\r\n\"two\nlines\",Ünï,,\"ü\"\n"
        #expect(try records(text) == [["a", "b, c", "say \"hi\"", "xtail", ""], ["two\nlines", "Ünï", "", "ü"]])
    }

    @Test func aBlankLineIsOneEmptyFieldAndTabsSplitApplesRows() throws {
        var blank: [Bool] = []
        try DelimitedText(Data("a\tb\n\nc\n".utf8), separator: 0x09, quoting: false, file: "t.txt").forEachRecord {
            blank.append($0.isBlankLine)
        }
        #expect(blank == [false, true, false])
        #expect(try records("\"q\"\t\"r\"\n", separator: 0x09, quoting: false) == [["\"q\"", "\"r\""]])
    }

    @Test func aFieldThatIsNotUTF8IsRefusedWithItsLineAndColumn() throws {
        var data = Data("a,b\nc,".utf8)
        data.append(contentsOf: [0xC3, 0x28])
        let error = try #require(throws: PayoutError.self) {
            try DelimitedText(data, separator: 0x2C, quoting: true, file: "t.csv").forEachRecord { _ in }
        }
        #expect("\(error)".contains("line 2") && "\(error)".contains("column 2"))
    }

    /// No text column holds a NUL byte: a report with one is a damaged file, named with its line and column (it
    /// failed the whole sync with the database's error).
    @Test func aNULByteIsRefusedWithItsLineAndColumn() throws {
        for text in ["a,b\nc,d\u{0}e\n", "a,b\nc,\"d\u{0}e\"\n", "a,b\nc,Ü\u{0}\n"] {
            let error = try #require(throws: PayoutError.self) { try records(text) }
            #expect(error.code == .badFile && "\(error)".contains("NUL"), "\(error)")
            #expect("\(error)".contains("line 2") && "\(error)".contains("column 2"), "\(error)")
        }
    }
}

/// A Cloud Storage listing's `pageToken` and `prefix` go into the query with everything but the unreserved characters
/// encoded: Google reads a bare `+` as a space.
@Suite struct CloudStorageQueryTests {
    @Test func aPageTokenKeepsItsPlusSlashAndEquals() {
        #expect(CloudStorageClient.queryValue("Cg+a/b=c") == "Cg%2Ba%2Fb%3Dc")
        #expect(CloudStorageClient.queryValue("earnings/earnings_2026") == "earnings%2Fearnings_2026")
        #expect(CloudStorageClient.queryValue("A-z_0.9~") == "A-z_0.9~")
    }
}
