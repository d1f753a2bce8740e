import Foundation
import Postgres
import TestSupport
import Testing

/// `import payouts`, `payouts list`, `payouts drop` and `report tie-out` of the built binary: the same report under
/// two file names is stored once and counted once; a dropped report leaves the tie-out, with its reason recorded;
/// imported again by hand, it counts again.
///
/// The fixture `earnings_202610_1234567890-1.zip` (written by hand) holds two `Charge refund` rows of October 2026:
/// USD 4.99 (`GPA.1111-2222-3333-44444`) and JPY 500; in merchant USD the refunds cost -4.99 + 0.75 (fee refund)
/// - 3.35 (the JPY refund) = -7.59, a payout cost of 7.59. The ledger is empty, so both lines are the report's only.
@Suite("storerecon payouts list and drop on the command line")
struct PayoutsCommandTests {
    let workspace: CommandWorkspace

    init() throws {
        workspace = try CommandWorkspace(
            prefix: "payoutscmd",
            app: "{ id: acme-android, platform: google, packageName: com.acme.app, "
                + "serviceAccountFile: /nonexistent.json }")
    }

    func run(_ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await workspace.run(arguments)
    }

    /// The fixture copied into the workspace under `name`.
    func copy(named name: String) throws -> String {
        let target = workspace.directory.appendingPathComponent(name)
        try FileManager.default.copyItem(
            at: ImportPayoutsCommandTests.fixtures.appendingPathComponent("earnings_202610_1234567890-1.zip"),
            to: target)
        return target.path
    }

    /// October's tie-out as JSON: its text, the USD report amount and payout cost read from it, and the apps it found
    /// no report for.
    func tieOut() async throws -> (text: String, usd: String?, cost: String?, missing: [String]) {
        let outcome = try await run(["report", "tie-out", "--month", "2026-10", "--format", "json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        let usd = (json["totals"] as? [[String: Any]])?.first { "\($0["currency"] ?? "")" == "USD" }
        let cost = (json["payout_costs"] as? [[String: Any]])?.first
        return (
            outcome.stdout, usd.map { "\($0["report_amount"] ?? "")" }, cost.map { "\($0["cost"] ?? "")" },
            json["missing_reports"] as? [String] ?? []
        )
    }

    func reportCount() throws -> (reports: Int, rows: Int) {
        let connection = try PostgresConnection(conninfo: workspace.conninfo)
        defer { connection.close() }
        let row = try connection.query(
            """
            SELECT (SELECT count(*)::int FROM payout_report) AS reports,
                   (SELECT count(*)::int FROM payout_report_row) AS rows
            """)[0]
        return (try row.decode("reports"), try row.decode("rows"))
    }

    @Test func theSameReportUnderTwoNamesIsStoredOnceAndADropLeavesTheTieOut() async throws {
        #expect(try await run(["migrate"]).status == 0)
        let named = try copy(named: "earnings_202610_1234567890-1.zip")
        let renamed = try copy(named: "earnings (1).zip")
        let first = try await run(["import", "payouts", "--app", "acme-android", named])
        #expect(first.status == 0 && first.stderr.contains("6 rows: inserted as report 1"), "\(first.stderr)")
        let before = try await tieOut()
        #expect(before.usd == "4.99" && before.cost == "7.59" && before.missing.isEmpty, "\(before.text)")

        let again = try await run(["import", "payouts", "--app", "acme-android", renamed])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("already loaded as report 1 (\(named)); nothing stored"), "\(again.stderr)")
        #expect(try reportCount() == (1, 6))
        #expect(try await tieOut().text == before.text)

        let listed = try await run(["payouts", "list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("id  app  "), "\(listed.stdout)")
        // The checksum's first 12 hex digits are the fixture's SHA-256 (sha256sum: 5e9087b76676...).
        let cells = lines[1].split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(
            cells.count == 11
                && Array(cells.prefix(8)) == [
                    "1", "acme-android", "google", "2026-10", "2026-10-01..2026-10-31",
                    "earnings_202610_1234567890-1.zip", "5e9087b76676", "6",
                ] && cells.suffix(2) == ["-", "-"], "\(listed.stdout)")

        let drop = try await run(["payouts", "drop", "1", "--reason", "another account's earnings"])
        #expect(drop.status == 0 && drop.stdout.contains("payout report #1 (acme-android"), "\(drop.stderr)")
        let dropped = try await tieOut()
        #expect(dropped.usd == nil && dropped.cost == nil && dropped.missing == ["acme-android"], "\(dropped.text)")
        #expect(try reportCount() == (0, 0))
        let json = try await run(["payouts", "list", "--format", "json", "--app", "acme-android"])
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], "\(json.stdout)")
        #expect(entries.count == 1)
        #expect(entries.first?["dropped"] as? Bool == true)
        #expect(entries.first?["drop_reason"] as? String == "another account's earnings")
        #expect(entries.first?["dropped_at"] is String && entries.first?["rows"] as? Int == 6)

        let twice = try await run(["payouts", "drop", "1", "--reason", "again"])
        #expect(twice.status == 1 && twice.stderr.contains("was dropped already"), "\(twice.stderr)")
        #expect(twice.stderr.contains("another account's earnings"), "\(twice.stderr)")
        let unknown = try await run(["payouts", "drop", "99", "--reason", "typo"])
        #expect(unknown.status == 1 && unknown.stderr.contains("#99: no report has that id"), "\(unknown.stderr)")

        // By hand the operator can bring the bytes back: a new id, counted again exactly as before.
        let back = try await run(["import", "payouts", "--app", "acme-android", renamed])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stderr.contains("inserted as report 2; its content was dropped as report 1"), "\(back.stderr)")
        #expect(try reportCount() == (1, 6))
        let restored = try await tieOut()
        #expect(restored.usd == "4.99" && restored.cost == "7.59", "\(restored.text)")
    }
}
