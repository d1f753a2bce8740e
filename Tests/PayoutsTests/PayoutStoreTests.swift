import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

@testable import Payouts

@Suite("PayoutStore against a real database")
struct PayoutStoreTests {
    let connection: PostgresConnection

    init() throws {
        connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "payouts"))
        try Migrator(connection: connection).migrate()
        try connection.execute(
            "INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.acme.app')")
    }

    func count(_ sql: String) throws -> Int {
        try connection.query(sql)[0].decode("n")
    }

    @Test func aReportIsStoredOnceWithItsRowsAndRawValues() throws {
        let report = try EarningsReportParser.parse(
            zip: try Fixture.data("earnings_202610_1234567890-1.zip"),
            name: "earnings/earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        #expect(try store.store(report, app: "droid") == .inserted)
        #expect(try store.store(report, app: "droid") == .unchanged)
        #expect(try count("SELECT count(*) AS n FROM payout_report") == 1)
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 6)
        let row = try connection.query(
            """
            SELECT raw[7] AS title, amount_nanos::text AS nanos, booked_at, kind FROM payout_report_row WHERE line = 6
            """)[0]
        #expect(try row.decode("title", as: String.self) == "Coins, 500")
        #expect(try row.decode("nanos", as: String.self) == "-500000000000")
        #expect(try row.decode("kind", as: String.self) == "Charge refund")
        // Oct 31, 2026 11:59:59 PM PDT.
        #expect(try row.decode("booked_at", as: Date.self) == Date(timeIntervalSince1970: 1_793_516_399))
        let stored = try connection.query("SELECT month, period_end::text AS e, checksum FROM payout_report")[0]
        #expect(try stored.decode("month", as: String.self) == "2026-10")
        #expect(try stored.decode("e", as: String.self) == "2026-10-31")
        #expect(try stored.decode("checksum", as: String.self) == report.checksum)
    }

    /// Raw values reach the `text[]` column byte for byte, whatever COPY and array literals escape.
    @Test func rawValuesWithQuotesBackslashesTabsAndLineBreaksAreKeptExactly() throws {
        let raw = ["say \"hi\"", "C:\\dir\\", "a\tb", "line\r\nbreak", "", "{x,y}", "NULL", "Ünïcødé 😀"]
        let report = PayoutReport(
            store: .google, reportKey: "earnings_202610_1-1.zip", month: "2026-10", periodStart: "2026-10-01",
            periodEnd: "2026-10-31", sourceName: "by hand", checksum: "c1",
            rows: [PayoutRow(line: 2, kind: "x", raw: raw)])
        try PayoutStore(connection: connection).store(report, app: "droid")
        let rows = try connection.query("SELECT raw[1] AS v FROM payout_report_row")
        #expect(rows.count == 1)
        for (index, value) in raw.enumerated() {
            let stored = try connection.query("SELECT raw[$1] AS v FROM payout_report_row", [index + 1])[0]
            #expect(try stored.decode("v", as: String.self) == value, "element \(index + 1)")
        }
    }

    @Test func aReissuedReportReplacesTheOldOneWhole() throws {
        let report = try EarningsReportParser.parse(
            zip: try Fixture.data("earnings_202610_1234567890-1.zip"), name: "earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        try store.store(report, app: "droid")
        var reissued = report
        reissued.checksum = String(repeating: "0", count: 64)
        reissued.rows = Array(report.rows.prefix(2))
        #expect(try store.store(reissued, app: "droid") == .replaced)
        #expect(try count("SELECT count(*) AS n FROM payout_report") == 1)
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 2)
        #expect(try count("SELECT replaced_count AS n FROM payout_report") == 1)
    }

    @Test func aReportThatFailsToLoadLeavesTheOldVersionWhole() throws {
        let report = try EarningsReportParser.parse(
            zip: try Fixture.data("earnings_202610_1234567890-1.zip"), name: "earnings_202610_1234567890-1.zip")
        let store = PayoutStore(connection: connection)
        try store.store(report, app: "droid")
        var broken = report
        broken.checksum = String(repeating: "1", count: 64)
        // A NUL byte cannot be stored in text: the COPY fails after the old report was deleted in the transaction.
        broken.rows[4].raw[0] = "GPA\u{0}"
        #expect(throws: PostgresError.self) { try store.store(broken, app: "droid") }
        #expect(try count("SELECT count(*) AS n FROM payout_report_row") == 6)
        let checksum: String = try connection.query("SELECT checksum FROM payout_report")[0].decode("checksum")
        #expect(checksum == report.checksum)
    }
}
