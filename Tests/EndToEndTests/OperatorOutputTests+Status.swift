import Foundation
import Postgres
import TestSupport
import Testing

extension OperatorOutputTests {
    /// The status table in an operator's words: only the app's own store's quotas, "held back" for storerecon's
    /// own cap and "throttled" for the store's, never-checked subscriptions named and not entitled, a finished run
    /// shown at its finish time, ages past 48 h in days.
    @Test func statusTableSaysWhatItMeans() throws {
        #expect(try run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try connection.executeScript(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('demo-android', 'google', 'com.example.demo')
                ON CONFLICT DO NOTHING;
            INSERT INTO job_run (job, app_id, host, pid, started_at, finished_at, outcome)
            VALUES ('google_voided', 'demo-android', 'h', 1, '2026-11-22T04:00:00Z', '2026-11-22T04:05:00Z', 'ok');
            INSERT INTO subscription (app_id, store_id, product_id) VALUES ('demo-android', 'token-1', 'p');
            INSERT INTO sync_checkpoint (job, app_id, high_water)
            VALUES ('google_voided', 'demo-android', now() - interval '3 days 5 hours');
            """)
        let status = try run(["status"])
        let text = status.stdout
        #expect(text.contains("last google_voided: ok at 2026-11-22T04:05:00.000Z"), "\(text)")
        #expect(text.contains("subscriptions unknown (not checked yet): 1"), "\(text)")
        #expect(!text.contains("(entitled)"), "\(text)")
        #expect(text.contains("checkpoint google_voided: 3 days 5 h behind"), "\(text)")
        #expect(text.contains("quota today google.voidedpurchases:"), "\(text)")
        #expect(text.contains("0 held back, 0 throttled"), "\(text)")
        #expect(!text.contains("apple."), "an Apple API in a Google app's status: \(text)")
        #expect(!text.contains("refused"), "\(text)")
    }

    /// Every refund is in one amount bucket (Apple family revokes included), and the text names them as the JSON
    /// does.
    @Test func statusRefundAmountsAddUpUnderTheJSONsNames() throws {
        #expect(try run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try connection.executeScript(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('demo-ios', 'apple', 'com.example.demo');
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, payload, gross_amount,
                                amount_source, amount_note)
            VALUES ('demo-ios', 'apple', 't1', now(), 'full', '{}', 990, 'store', NULL),
                   ('demo-ios', 'apple', 't2', now(), 'family_revoke', '{}', NULL, NULL, 'family_revoke'),
                   ('demo-ios', 'apple', 't3', now(), 'full', '{}', NULL, NULL, NULL),
                   ('demo-ios', 'apple', 't4', now(), 'full', '{}', 500, 'configured', 'order_not_found');
            """)
        try """
        database:
          url: "\(conninfo)"
        apps:
          - { id: demo-ios, platform: apple, bundleId: com.example.demo, environment: sandbox, issuerId: i, keyId: k,
              privateKeyFile: /nonexistent.p8, rootCertificates: [/nonexistent.cer] }
        """.write(to: directory.appendingPathComponent("ios.yaml"), atomically: true, encoding: .utf8)
        let status = try run(["status", "--config", "ios.yaml"])
        let text = status.stdout
        #expect(!text.isEmpty, "\(status.stderr)")
        #expect(
            text.contains(
                "refund amounts of 4: store 1, pending 0, estimated 1, unknown 1, family_revoke 1; "
                    + "of the unknown or estimated: order_not_found 1, no_permission 0"), "\(text)")
        let json = try run(["status", "--config", "ios.yaml", "--format", "json"]).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let app = try #require((object["apps"] as? [[String: Any]])?.first)
        let amounts = try #require(app["refundAmounts"] as? [String: Int])
        let buckets = ["store", "pending", "estimated", "unknown", "family_revoke"]
        #expect(buckets.map { amounts[$0] ?? -1 }.reduce(0, +) == app["refunds"] as? Int)
        for name in amounts.keys { #expect(text.contains(" \(name) "), "the text lacks the JSON's \(name)") }
    }

    @Test func statusJSONTimesAreRFC3339() throws {
        #expect(try run(["migrate"]).status == 0)
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute(
            """
            INSERT INTO job_run (job, app_id, host, pid, started_at, finished_at, outcome)
            VALUES ('google_voided', 'demo-android', 'h', 1, '2026-11-22T04:00:00.25Z', '2026-11-22T04:05:00Z', 'ok')
            """)
        let status = try run(["status", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let apps = try #require(object["apps"] as? [[String: Any]])
        let runs = try #require(apps.first?["lastRuns"] as? [[String: Any]])
        #expect(runs.first?["startedAt"] as? String == "2026-11-22T04:00:00.250Z")
        #expect(runs.first?["finishedAt"] as? String == "2026-11-22T04:05:00.000Z")
        // The same with the tools an operator uses: jq extracts, Python's datetime reads.
        let file = directory.appendingPathComponent("status.json")
        try Data(status.stdout.utf8).write(to: file)
        let script = """
            set -e
            jq -r '.. | objects | (.startedAt?, .finishedAt?) // empty' "$0" > "$0.times"
            test -s "$0.times"
            python3 -c 'import sys, datetime
            for line in open(sys.argv[1]):
                t = datetime.datetime.fromisoformat(line.strip())
                assert t.utcoffset() == datetime.timedelta(0), line
                assert t.year == 2026, line' "$0.times"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, file.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "jq or Python could not read the times")
    }
}
