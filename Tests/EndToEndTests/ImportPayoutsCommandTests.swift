import Foundation
import Postgres
import TestSupport
import Testing

/// `storerecon import payouts` on the built binary with the parser tests' own files: a report is stored whole and
/// once, and a bad file exits 1 naming its line and column with nothing of it stored (the earnings zip is parsed
/// while it is stored, so a bad row must abort the load it is part of).
@Suite("storerecon import payouts on the command line")
struct ImportPayoutsCommandTests {
    let workspace: CommandWorkspace
    var conninfo: String { workspace.conninfo }
    var directory: URL { workspace.directory }
    var storerecon: BuiltExecutable { workspace.storerecon }
    /// `Tests/PayoutsTests/Fixtures`, read from the source tree.
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PayoutsTests/Fixtures")

    init() throws {
        workspace = try CommandWorkspace(
            prefix: "importpayouts",
            app: "{ id: acme-android, platform: google, packageName: com.acme.app, "
                + "serviceAccountFile: /nonexistent.json }")
    }

    func importing(_ files: [String]) async throws -> BuiltExecutable.Outcome {
        try await storerecon.run(
            ["import", "payouts", "--app", "acme-android"]
                + files.map { Self.fixtures.appendingPathComponent($0).path },
            directory: directory)
    }

    func counts() throws -> (reports: Int, rows: Int, recorded: Int) {
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let row = try connection.query(
            """
            SELECT (SELECT count(*)::int FROM payout_report) AS reports,
                   (SELECT count(*)::int FROM payout_report_row) AS rows,
                   (SELECT coalesce(sum(row_count), 0)::int FROM payout_report) AS recorded
            """)[0]
        return (try row.decode("reports"), try row.decode("rows"), try row.decode("recorded"))
    }

    @Test func aReportIsStoredOnceAndABadRowStoresNothingOfItsFile() async throws {
        #expect(try await storerecon.run(["migrate"], directory: directory).status == 0)
        let first = try await importing(["earnings_202610_1234567890-1.zip"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("google report 2026-10 (2026-10-01..2026-10-31), 6 rows: inserted"))
        #expect(try counts() == (1, 6, 6))

        let again = try await importing(["earnings_202610_1234567890-1.zip"])
        #expect(again.status == 0 && again.stderr.contains(": unchanged"), "\(again.stderr)")
        #expect(try counts() == (1, 6, 6))

        // Named as Google names its files, so each is parsed while it is stored: the rows before the bad one (line
        // 3 or 4) were already sent to the COPY, and must go with it.
        for (fixture, place) in [
            ("earnings-unknown-currency.zip", "line 3, column 15"), ("earnings-not-a-number.zip", "line 4, column 16"),
        ] {
            let named = directory.appendingPathComponent("earnings_202610_1234567890-2.zip")
            try? FileManager.default.removeItem(at: named)
            try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent(fixture), to: named)
            let bad = try await storerecon.run(
                ["import", "payouts", "--app", "acme-android", named.path], directory: directory)
            #expect(bad.status == 1, "\(fixture): \(bad.stderr)")
            #expect(bad.stderr.contains(place), "\(fixture): \(bad.stderr)")
            #expect(try counts() == (1, 6, 6), "\(fixture) left rows behind")
        }
    }
}
