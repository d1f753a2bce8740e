import Foundation

@testable import Payouts

/// The report files in `Fixtures/`, written by hand (see each test for the values worked out from them).
enum Fixture {
    static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try Data(contentsOf: url)
    }

    static func path(_ name: String) -> String {
        Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil)?.path ?? name
    }

    /// The CSV records of a zip's one entry, by line: every raw value of the file.
    static func records(ofZip data: Data) throws -> [Int: [String]] {
        let entry = try ZipArchive.singleEntry(of: data, file: "fixture")
        var records: [Int: [String]] = [:]
        try DelimitedText(entry.data, separator: 0x2C, quoting: true, file: "fixture").forEachRecord {
            records[$0.line] = $0.fields
        }
        return records
    }

    /// The CSV records of the fixture zip `name`, by line.
    static func records(ofZip name: String) throws -> [Int: [String]] { try records(ofZip: data(name)) }
}
