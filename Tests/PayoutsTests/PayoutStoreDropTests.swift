import Foundation
import Postgres
import Reconciler
import StoreCalendar
import TestSupport
import Testing

@testable import Payouts

/// A report is stored once by its bytes, whatever the file's name; an operator drops a wrong one with a reason.
@Suite("PayoutStore: once by content, and drops")
struct PayoutStoreDropTests {
    let connection: PostgresConnection

    init() throws {
        connection = try PostgresConnection(conninfo: try TestDatabase.create(prefix: "payoutdrop"))
        try Migrator(connection: connection).migrate()
        try connection.execute(
            "INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.acme.app')")
    }

    func count(_ sql: String) throws -> Int {
        try connection.query(sql)[0].decode("n")
    }

    /// The fixture (6 rows) parsed under `name`.
    func fixture(named name: String) throws -> PayoutReport {
        try EarningsReportParser.parse(zip: try Fixture.data("earnings_202610_1234567890-1.zip"), name: name)
    }

    @Test func theSameBytesUnderAnotherNameAreNotStoredAgain() throws {
        let store = PayoutStore(connection: connection)
        let first = try store.store(PayoutStream(try fixture(named: "earnings_202610_1234567890-1.zip")), app: "droid")
        #expect(first.outcome == .inserted && first.rows == 6)
        let copy = try fixture(named: "/home/finance/Downloads/earnings (1).zip")
        let again = try store.store(PayoutStream(copy), app: "droid")
        #expect(
            again
                == PayoutStore.Stored(
                    outcome: .duplicate, rows: 0, reportId: first.reportId, heldBy: "earnings_202610_1234567890-1.zip"))
        #expect(try count("SELECT count(*)::int AS n FROM payout_report") == 1)
        #expect(try count("SELECT count(*)::int AS n FROM payout_report_row") == 6)
        // The same name again is the same report, unchanged.
        let same = try store.store(PayoutStream(try fixture(named: "earnings_202610_1234567890-1.zip")), app: "droid")
        #expect(same.outcome == .unchanged && same.reportId == first.reportId)
    }

    @Test func aDropIsRecordedWithItsReasonAndCannotBeRepeated() throws {
        let store = PayoutStore(connection: connection)
        let stored = try store.store(PayoutStream(try fixture(named: "earnings_202610_1234567890-1.zip")), app: "droid")
        let outcome = try store.drop(id: stored.reportId, reason: "another account's earnings")
        #expect(outcome == .dropped(app: "droid", sourceName: "earnings_202610_1234567890-1.zip"))
        #expect(try count("SELECT count(*)::int AS n FROM payout_report") == 0)
        #expect(try count("SELECT count(*)::int AS n FROM payout_report_row") == 0)
        let entries = try store.list(app: "droid")
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.id == stored.reportId && entry.rows == 6 && entry.month == CalendarMonth(year: 2026, month: 10))
        #expect(entry.dropReason == "another account's earnings" && entry.droppedAt != nil)
        // The file went with the drop, byte for byte.
        let kept: String = try connection.query("SELECT encode(file, 'base64') AS f FROM payout_report_drop")[0]
            .decode("f")
        #expect(
            Data(base64Encoded: kept, options: .ignoreUnknownCharacters)
                == (try Fixture.data("earnings_202610_1234567890-1.zip")))

        guard case .alreadyDropped(_, let reason) = try store.drop(id: stored.reportId, reason: "again") else {
            Issue.record("a second drop was not refused")
            return
        }
        #expect(reason == "another account's earnings")
        #expect(try store.drop(id: stored.reportId + 1000, reason: "none") == .unknown)
        #expect(try count("SELECT count(*)::int AS n FROM payout_report_drop") == 1)
    }

    @Test func droppedBytesStayDroppedForASyncAndComeBackByHand() throws {
        let store = PayoutStore(connection: connection)
        let report = try fixture(named: "earnings_202610_1234567890-1.zip")
        let first = try store.store(PayoutStream(report), app: "droid")
        _ = try store.drop(id: first.reportId, reason: "loaded twice by mistake")

        let fetched = try store.store(PayoutStream(report), app: "droid", ifDropped: .keepDropped)
        #expect(fetched == PayoutStore.Stored(outcome: .keptDropped, rows: 0, reportId: first.reportId))
        #expect(try count("SELECT count(*)::int AS n FROM payout_report") == 0)

        let byHand = try store.store(PayoutStream(report), app: "droid")
        #expect(byHand.outcome == .inserted && byHand.rows == 6 && byHand.droppedBefore == first.reportId)
        #expect(byHand.reportId != first.reportId)
        let listed = try store.list(app: nil).map { "\($0.id) \($0.droppedAt == nil ? "loaded" : "dropped")" }
        #expect(listed == ["\(first.reportId) dropped", "\(byHand.reportId) loaded"])
    }

    /// Migration 0020 on a database that stored the same bytes three times under three names (as version 0019 did):
    /// the first loaded stays, the two others are dropped naming it, rows and all; a fourth copy is refused.
    @Test func theMigrationDropsTheCopiesStoredBefore() throws {
        let fresh = try PostgresConnection(conninfo: try TestDatabase.create(prefix: "payoutdrop0020"))
        defer { fresh.close() }
        let migrations = Migration.embedded
        let index = try #require(migrations.firstIndex { $0.name.hasPrefix("0020_") })
        for migration in migrations[..<index] { try fresh.executeScript(migration.sql) }
        try fresh.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.acme.app')")
        for (key, checksum) in [("a.zip", "c1"), ("b.zip", "c1"), ("other.zip", "c2"), ("c.zip", "c1")] {
            let id: Int64 = try fresh.query(
                """
                INSERT INTO payout_report (app_id, store, report_key, month, period_start, period_end, source_name,
                                           checksum, row_count)
                VALUES ('droid', 'google', $1, '2026-10', '2026-10-01', '2026-10-31', $1, $2, 1) RETURNING id
                """, [key, checksum])[0].decode("id")
            try fresh.execute(
                "INSERT INTO payout_report_row (report_id, line, kind) VALUES ($1, 2, 'Charge refund')", [id])
        }
        try fresh.executeScript(migrations[index].sql)

        let kept = try fresh.query("SELECT report_key FROM payout_report ORDER BY id").map {
            try $0.decode("report_key", as: String.self)
        }
        #expect(kept == ["a.zip", "other.zip"])
        let dropped = try fresh.query("SELECT report_key, reason FROM payout_report_drop ORDER BY id").map {
            "\(try $0.decode("report_key", as: String.self)): \(try $0.decode("reason", as: String.self))"
        }
        #expect(
            dropped == [
                "b.zip: migration 0020: the same file as report 1 (stored once by content from this version on)",
                "c.zip: migration 0020: the same file as report 1 (stored once by content from this version on)",
            ])
        let rows: Int = try fresh.query("SELECT count(*)::int AS n FROM payout_report_row")[0].decode("n")
        #expect(rows == 2)
        let error = #expect(throws: PostgresError.self) {
            try fresh.execute(
                """
                INSERT INTO payout_report (app_id, store, report_key, month, period_start, period_end, source_name,
                                           checksum, row_count)
                VALUES ('droid', 'google', 'd.zip', '2026-10', '2026-10-01', '2026-10-31', 'd.zip', 'c1', 1)
                """)
        }
        #expect(error?.sqlState == "23505")
    }
}
