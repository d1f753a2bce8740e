import Foundation
import Postgres
import TestSupport
import Testing

/// `quarantine list|retry|drop [--app ID] [--id N | --all]` as design.md gives it: `list --id` shows one row, and
/// `drop --all` abandons every open row of an app (or of all) with the one reason.
@Suite("storerecon quarantine: --id and --all")
struct QuarantineCommandTests {
    let workspace: CommandWorkspace
    init() throws { workspace = try CommandWorkspace(prefix: "quarantinecmd") }

    @Test func listOneRowAndDropEveryOpenRowOfAnApp() throws {
        #expect(try workspace.run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: workspace.conninfo)
        defer { connection.close() }
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('old-app', 'google', 'com.old')")
        let ids: [Int64] = try connection.query(
            """
            INSERT INTO quarantine (app_id, job, raw, reason)
            VALUES ('demo-android', 'google_voided', '{"orderId":"a"}', 'bad a'),
                   ('demo-android', 'google_voided', '{"orderId":"b"}', 'bad b'),
                   ('old-app', 'google_voided', '{"orderId":"c"}', 'bad c')
            RETURNING id
            """
        ).map { try $0.decode("id") }
        let one = try workspace.run(["quarantine", "list", "--id", "\(ids[1])", "--format", "json"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.contains("bad b") && !one.stdout.contains("bad a"), "\(one.stdout)")

        for wrong in [
            ["drop", "--all"], ["drop", "--id", "\(ids[0])", "--all", "--reason", "x"], ["drop", "--reason", "x"],
        ] {
            #expect(try workspace.run(["quarantine"] + wrong).status == 64, "\(wrong)")
        }
        let dropped = try workspace.run(
            ["quarantine", "drop", "--all", "--app", "demo-android", "--reason", "QA orders, not refunds"])
        #expect(dropped.status == 0, "\(dropped.stderr)")
        #expect(dropped.stdout.contains("2 quarantined rows dropped"), "\(dropped.stdout)")
        let open: [String] = try connection.query(
            "SELECT app_id || ' ' || coalesce(resolution_note, '-') AS r FROM quarantine ORDER BY id"
        ).map { try $0.decode("r") }
        #expect(open == ["demo-android QA orders, not refunds", "demo-android QA orders, not refunds", "old-app -"])
        let rest = try workspace.run(["quarantine", "drop", "--all", "--reason", "app removed"])
        #expect(rest.stdout.contains("1 quarantined rows dropped"), "\(rest.stdout)")
    }
}
