import Foundation
import Postgres
import Reconciler
import StoreCalendar
import TestSupport
import Testing

@testable import Payouts

@Suite("PayoutStore against a real database")
struct PayoutStoreTests {
    let connection: PostgresConnection
    let conninfo: String

    init() throws {
        conninfo = try TestDatabase.create(prefix: "payouts")
        connection = try PostgresConnection(conninfo: conninfo)
        try Migrator(connection: connection).migrate()
        try connection.execute(
            "INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.acme.app')")
    }

    func count(_ sql: String) throws -> Int {
        try connection.query(sql)[0].decode("n")
    }

    /// The file as stored.
    func storedFile() throws -> Data {
        let text: String = try connection.query("SELECT encode(file, 'base64') AS f FROM payout_report")[0].decode("f")
        return try #require(Data(base64Encoded: text, options: .ignoreUnknownCharacters))
    }

    /// A Google report imported by hand under its own name, then listed by the sync with its generation: the same
    /// bytes, so nothing is stored again, and the stored report takes the generation (the next sync skips it).
    @Test func theSameBytesUnderTheStoresNameTakeTheObjectsGeneration() throws {
        let zip = try Fixture.data("earnings_202610_1234567890-1.zip")
        var report = try EarningsReportParser.parse(zip: zip, name: "earnings/earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        #expect(try store.store(report, app: "droid") == .inserted)
        report.generation = "1730000000000001"
        #expect(try store.store(report, app: "droid") == .unchanged)
        let generation: String? = try connection.query("SELECT generation FROM payout_report")[0].decodeIfPresent(
            "generation")
        #expect(generation == "1730000000000001")
    }

    @Test func aReportIsStoredOnceWithItsRowsAndItsFileWhole() throws {
        let zip = try Fixture.data("earnings_202610_1234567890-1.zip")
        let report = try EarningsReportParser.parse(zip: zip, name: "earnings/earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        #expect(try store.store(report, app: "droid") == .inserted)
        #expect(try store.store(report, app: "droid") == .unchanged)
        #expect(try count("SELECT count(*) AS n FROM payout_report") == 1)
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 6)
        let row = try connection.query(
            "SELECT amount_nanos::text AS nanos, booked_at, kind, raw FROM payout_report_row WHERE line = 6")[0]
        #expect(try row.decode("nanos", as: String.self) == "-500000000000")
        #expect(try row.decode("kind", as: String.self) == "Charge refund")
        #expect(try row.decodeIfPresent("raw", as: String.self) == nil)
        // Oct 31, 2026 11:59:59 PM PDT.
        #expect(try row.decode("booked_at", as: Date.self) == Date(timeIntervalSince1970: 1_793_516_399))
        let stored = try connection.query("SELECT month, period_end::text AS e, checksum FROM payout_report")[0]
        #expect(try stored.decode("month", as: String.self) == "2026-10")
        #expect(try stored.decode("e", as: String.self) == "2026-10-31")
        #expect(try stored.decode("checksum", as: String.self) == report.checksum)
        // The raw values are in the file kept whole: the same bytes, and line 6's title read back from them.
        let file = try storedFile()
        #expect(file == zip)
        #expect(PayoutReport.checksum(of: file) == report.checksum)
        #expect(try Fixture.records(ofZip: file)[6]?[6] == "Coins, 500")
    }

    /// Rows have no unique key (migration 0017): the same report loaded by four connections at once is stored once,
    /// its rows once each.
    @Test func loadsAtOnceStoreTheReportOnce() async throws {
        let conninfo = conninfo
        let outcomes = try await withThrowingTaskGroup(of: PayoutStore.Outcome.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let connection = try PostgresConnection(conninfo: conninfo)
                    defer { connection.close() }
                    let zip = try Fixture.data("earnings_202610_1234567890-1.zip")
                    let report = try EarningsReportParser.parse(zip: zip, name: "earnings_202610_1234567890-1.zip")
                    return try PayoutStore(connection: connection).store(report, app: "droid")
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .inserted }.count == 1 && outcomes.filter { $0 == .unchanged }.count == 3)
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 6)
        #expect(try count("SELECT count(DISTINCT line) AS n FROM payout_report_row") == 6)
    }

    /// The file reaches the `bytea` column byte for byte, every byte value included.
    @Test func theFileIsKeptByteForByte() throws {
        let bytes = Data((0..<1000).map { UInt8(($0 * 7) % 256) })
        let report = PayoutReport(
            store: .google, reportKey: "earnings_202610_1-1.zip", month: CalendarMonth(year: 2026, month: 10),
            periodStart: "2026-10-01",
            periodEnd: "2026-10-31", sourceName: "by hand", checksum: "c1", file: bytes,
            rows: [PayoutRow(line: 2, kind: "x")])
        try PayoutStore(connection: connection).store(report, app: "droid")
        #expect(try storedFile() == bytes)
        #expect(PayoutStore.byteaHex(Data([0x00, 0x0A, 0x5C, 0xFF])) == "\\x000a5cff")
    }

    @Test func aReissuedReportReplacesTheOldOneWhole() throws {
        let report = try EarningsReportParser.parse(
            zip: try Fixture.data("earnings_202610_1234567890-1.zip"), name: "earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        try store.store(report, app: "droid")
        var reissued = report
        reissued.checksum = String(repeating: "0", count: 64)
        reissued.rows = Array(report.rows.prefix(2))
        try connection.execute("UPDATE payout_report SET closed_at = '2020-01-05T00:00:00Z'")
        #expect(try store.store(reissued, app: "droid") == .replaced)
        #expect(try count("SELECT count(*) AS n FROM payout_report") == 1)
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 2)
        #expect(try count("SELECT replaced_count AS n FROM payout_report") == 1)
        // The month stays closed from the first load (`--basis recorded`); `loaded_at` is the re-issue's.
        #expect(
            try count(
                """
                SELECT count(*) AS n FROM payout_report
                WHERE closed_at = '2020-01-05T00:00:00Z' AND loaded_at > '2020-01-05T00:00:00Z'
                """) == 1)
    }

    /// A file imported by hand under another name, then met as Google's object, then re-issued by Google: the
    /// re-issue replaces it (it used to be stored beside it, and the tie-out summed the month's refunds twice).
    @Test func aHandImportedFileMetAsTheStoresObjectIsReplacedByItsReissue() throws {
        let zip = try Fixture.data("earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        let byHand = try EarningsReportParser.parse(zip: zip, name: "/tmp/oct.zip")
        #expect(try store.store(byHand, app: "droid") == .inserted)
        let synced = try EarningsReportParser.parse(
            zip: zip, name: "earnings/earnings_202610_1234567890-1.zip", generation: "1700000000000001")
        #expect(try store.store(synced, app: "droid") == .duplicate)
        let held = try connection.query("SELECT report_key, generation FROM payout_report")[0]
        #expect(try held.decode("report_key", as: String.self) == synced.reportKey)
        #expect(try held.decode("generation", as: String.self) == "1700000000000001")
        var reissued = synced
        reissued.checksum = String(repeating: "2", count: 64)
        reissued.generation = "1700000000000002"
        reissued.rows = Array(synced.rows.prefix(2))
        #expect(try store.store(reissued, app: "droid") == .replaced)
        #expect(try count("SELECT count(*) AS n FROM payout_report WHERE month = '2026-10'") == 1)
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 2)
    }

    /// Google's object synced (the month closed), its re-issue imported by hand under another name, then met as the
    /// object: the row that stays keeps the month's first close.
    @Test func aReissueImportedByHandThenMetAsTheObjectKeepsTheFirstClose() throws {
        let zip = try Fixture.data("earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        let synced = try EarningsReportParser.parse(
            zip: zip, name: "earnings/earnings_202610_1234567890-1.zip", generation: "1700000000000001")
        #expect(try store.store(synced, app: "droid") == .inserted)
        try connection.execute("UPDATE payout_report SET closed_at = '2020-01-05T00:00:00Z'")
        var byHand = try EarningsReportParser.parse(zip: zip, name: "/tmp/oct-reissued.zip")
        byHand.checksum = String(repeating: "3", count: 64)
        #expect(try store.store(byHand, app: "droid") == .inserted)
        var reissued = synced
        reissued.checksum = byHand.checksum
        reissued.generation = "1700000000000002"
        #expect(try store.store(reissued, app: "droid") == .duplicate)
        #expect(
            try count(
                """
                SELECT count(*) AS n FROM payout_report
                WHERE closed_at = '2020-01-05T00:00:00Z' AND generation = '1700000000000002'
                """) == 1)
        #expect(try count("SELECT count(*) AS n FROM payout_report") == 1)
    }

    @Test func aReportThatFailsToLoadLeavesTheOldVersionWhole() throws {
        let report = try EarningsReportParser.parse(
            zip: try Fixture.data("earnings_202610_1234567890-1.zip"), name: "earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        try store.store(report, app: "droid")
        var broken = report
        broken.checksum = String(repeating: "1", count: 64)
        // A NUL byte cannot be stored in text: the COPY fails after the old report was deleted in the transaction.
        broken.rows[4].orderId = "GPA\u{0}"
        #expect(throws: PostgresError.self) { try store.store(broken, app: "droid") }
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 6)
        let checksum: String = try connection.query("SELECT checksum FROM payout_report")[0].decode("checksum")
        #expect(checksum == report.checksum)
    }
}
