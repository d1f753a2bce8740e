import Foundation
import Ledger
import Postgres
import Reconciler
import TestSupport
import Testing

/// `import consumption` on a real database: every bad line is named (a CSV syntax error too, and those after it),
/// nothing of a file with a bad line is written, and blank lines are skipped as in `import subscriptions`.
@Suite("ConsumptionImporter against a real database")
struct ConsumptionImporterTests {
    static let header =
        "platform,purchase_id,customer_consented,delivery_status,consumption_percent,"
        + "sample_content_provided,as_of\n"

    func run(_ csv: String, stored query: String = "count(*)::int") throws -> (ConsumptionImporter.Report, Int) {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "consumption"))
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        var reader = CSVReader(bytes: Array(csv.utf8))
        let report = try ConsumptionImporter(connection: connection).importRecords(
            from: &reader, source: "facts.csv", dryRun: false)
        let stored: Int = try connection.query("SELECT \(query) AS n FROM consumption_fact")[0].decode("n")
        return (report, stored)
    }

    /// A file longer than a statement's chunk: written as it is read, still all or nothing, and a purchase's newest
    /// fact wins across chunks as within one.
    static func long(rows: Int, last: String) -> String {
        var csv = header + "apple,repeat,true,delivered,20,false,2026-07-02T08:00:00Z\n"
        for n in 0..<rows { csv += "apple,\(n),true,delivered,10,false,2026-07-01T08:00:00Z\n" }
        return csv + "apple,repeat,true,delivered,10,false,2026-07-01T08:00:00Z\n"
            + "apple,repeat,true,delivered,30,false,2026-06-30T08:00:00Z\n" + last
    }

    @Test func aLongFileIsWrittenWholeWithTheNewestFactOfEachPurchase() throws {
        let (report, consumption) = try run(
            Self.long(rows: 25_000, last: ""),
            stored: "(SELECT consumption_milli FROM consumption_fact WHERE purchase_id = 'repeat')")
        #expect(report.badLines.isEmpty && report.rowsRead == 25_003)
        #expect(
            consumption == 20_000, "the fact of 2026-07-02, in the first chunk: older ones in a later chunk lose to it")
        let (_, stored) = try run(Self.long(rows: 25_000, last: ""))
        #expect(stored == 25_001)
    }

    @Test func aBadLineAfterChunksWereWrittenLeavesNothing() throws {
        let (report, stored) = try run(
            Self.long(rows: 25_000, last: "apple,x,maybe,delivered,10,false,2026-07-01T08:00:00Z\n"))
        #expect(report.badLines.map(\.line) == [25_005])
        #expect(stored == 0, "the chunks written before it are rolled back")
    }

    @Test func everyBadLineIsNamedEvenAfterACSVSyntaxError() throws {
        let (report, stored) = try run(
            Self.header
                + "apple,1,true,delivered,10,false,2026-07-01T08:00:00Z\n"
                + "apple,\"x\"y,true,delivered,10,false,2026-07-01T08:00:00Z\n"
                + "apple,3,true,delivered,10,false,2026-07-01T08:00:00Z\n"
                + "apple,4,maybe,delivered,10,false,2026-07-01T08:00:00Z\n")
        #expect(report.badLines.map(\.line) == [3, 5], "\(report.badLines)")
        #expect(stored == 0, "nothing of a file with a bad line is written")
    }

    @Test func blankLinesAreSkipped() throws {
        let (report, stored) = try run(
            Self.header + "apple,1,true,delivered,10,false,2026-07-01T08:00:00Z\n\n"
                + "google,GPA.1,true,delivered,,false,2026-07-01T08:00:00Z\n\n")
        #expect(report.badLines.isEmpty, "\(report.badLines)")
        #expect(stored == 2)
    }

    /// A purchase id is a key of the facts table: one its index can hold (random bytes, which do not compress) is
    /// stored, a longer one is named with its line rather than failing the import with the database's error.
    @Test func aPurchaseIdTooLongForTheKeyIsNamedByLine() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        func id(_ length: Int) -> String { String((0..<length).map { _ in alphabet[Int(generator.next() % 64)] }) }
        let fits = "google,\(id(LedgerLimits.maxKeyBytes)),true,delivered,10,false,2026-07-01T08:00:00Z\n"
        let (stored, count) = try run(Self.header + fits)
        #expect(stored.badLines.isEmpty && count == 1, "\(stored.badLines)")
        let (report, none) = try run(
            Self.header + fits
                + "google,\(id(LedgerLimits.maxKeyBytes + 1)),true,delivered,10,false,2026-07-01T08:00:00Z\n")
        #expect(report.badLines.map(\.line) == [3], "\(report.badLines)")
        #expect(report.badLines.first?.description.contains("longer than \(LedgerLimits.maxKeyBytes) bytes") == true)
        #expect(none == 0)
    }
}
