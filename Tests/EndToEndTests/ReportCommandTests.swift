import Foundation
import Postgres
import TestSupport
import Testing

/// `storerecon report refunds` on the built binary: exit codes as docs/commands.md gives them, help that says what is
/// printed, and the new options.
@Suite("storerecon report refunds on the command line")
struct ReportCommandTests {
    let workspace: CommandWorkspace
    var conninfo: String { workspace.conninfo }
    var directory: URL { workspace.directory }
    var storerecon: BuiltExecutable { workspace.storerecon }

    init() throws { workspace = try CommandWorkspace(prefix: "reportcli") }

    func run(_ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await workspace.run(arguments)
    }

    /// One Google refund of 9.99 USD on 3 November, recorded on 20 November, nothing else.
    func ledger() async throws {
        #expect(try await run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, recorded_at, refund_type, gross_amount,
                                tax_amount, amount_precision, amount_source, currency, payload)
            VALUES ('demo-android', 'google', 'GPA.1', '2026-11-03T10:00:00Z', '2026-11-20T00:00:00Z', 'full', 9990,
                    0, 3, 'store', 'USD', '{}')
            """)
    }

    /// The rates file has no USD rate for 3 November: docs/commands.md says exit 1 (an input file's content), and so it
    /// is; nothing is printed.
    @Test func aMissingRateExits1() async throws {
        try await ledger()
        try "date,currency,rate_to_EUR\n2026-11-02,USD,0.9\n"
            .write(to: directory.appendingPathComponent("rates.csv"), atomically: true, encoding: .utf8)
        let outcome = try await run(
            ["report", "refunds", "--from", "2026-11-01", "--to", "2026-11-30", "--rates", "rates.csv"])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("--rates: no rate for USD on 2026-11-03"), "\(outcome.stderr)")
        #expect(outcome.stderr.split(separator: "\n").count == 1, "\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
        let commands = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/commands.md"), encoding: .utf8)
        #expect(commands.contains("(\"--rates: no rate for USD on 2026-11-03\"), exit 1"))
    }

    @Test func helpSaysMajorUnitsAndTheNewOptionsAreChecked() async throws {
        let help = try await run(["report", "refunds", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("major units") && !help.stdout.contains("minor units"), "\(help.stdout)")
        #expect(help.stdout.contains("--basis") && help.stdout.contains("--environment"))
        try await ledger()
        for (arguments, reason) in [
            (["--basis", "booked"], "--basis: expected one of event, recorded"),
            (["--environment", "staging"], "--environment: expected one of production, sandbox, all"),
        ] {
            let outcome = try await run(
                ["report", "refunds", "--from", "2026-11-01", "--to", "2026-11-30"] + arguments)
            #expect(outcome.status == 64, "\(outcome.stderr)")
            #expect(outcome.stderr.contains(reason), "\(outcome.stderr)")
        }
        let json = try await run(
            [
                "report", "refunds", "--from", "2026-11-01", "--to", "2026-11-30", "--detail", "--format", "json",
                "--basis", "recorded", "--environment", "all", "--output", "refunds.json",
            ])
        #expect(json.status == 0, "\(json.stderr)")
        let data = try Data(contentsOf: directory.appendingPathComponent("refunds.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let refunds = try #require(object["refunds"] as? [[String: Any]])
        #expect(object["basis"] as? String == "recorded" && object["environment"] as? String == "all")
        #expect(refunds.count == 1 && refunds.first?["day"] as? String == "2026-11-20")
        let byEvent = try await run(
            ["report", "refunds", "--from", "2026-11-01", "--to", "2026-11-30", "--detail", "--format", "json"])
        let eventObject = try #require(
            try JSONSerialization.jsonObject(with: Data(byEvent.stdout.utf8)) as? [String: Any])
        let eventRows = try #require(eventObject["refunds"] as? [[String: Any]])
        #expect(eventRows.count == 1 && eventRows.first?["day"] as? String == "2026-11-03")
        #expect(eventRows.first?["gross"] as? String == "9.99" && eventRows.first?["price"] is NSNull)
    }

    /// `--month --store-periods`: the month as each store books it; the options that cannot go with it are usage
    /// errors.
    @Test func aMonthAsEachStoreBooksIt() async throws {
        try await ledger()
        for (arguments, reason) in [
            (
                ["--from", "2026-11-01", "--to", "2026-11-30", "--store-periods"],
                "--store-periods needs --month YYYY-MM"
            ),
            (["--month", "2026-13"], "--month 2026-13: expected YYYY-MM"),
            (["--month", "2026-11", "--from", "2026-11-01"], "--month replaces --from and --to"),
        ] {
            let outcome = try await run(["report", "refunds"] + arguments)
            #expect(outcome.status == 64, "\(outcome.stderr)")
            #expect(outcome.stderr.contains(reason), "\(outcome.stderr)")
        }
        // GPA.1 of 3 November (Pacific too) is in Google's November, not its October.
        let november = try await run(
            ["report", "refunds", "--month", "2026-11", "--store-periods", "--by", "platform", "--format", "csv"])
        #expect(november.status == 0, "\(november.stderr)")
        #expect(november.stdout.contains("google,USD,store,1,1,9.99,0.00,9.99"), "\(november.stdout)")
        let october = try await run(["report", "refunds", "--month", "2026-10", "--store-periods", "--format", "csv"])
        #expect(october.status == 0 && !october.stdout.contains("9.99"), "\(october.stdout)")
    }
}
