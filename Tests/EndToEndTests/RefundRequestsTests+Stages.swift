import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

extension RefundRequestsTests {
    /// First run: the requests are found; no facts yet, so nothing is sent. Returns the requests found.
    func expectFirstRunFindsRequestsAndSendsNothing(
        _ stores: SimulatedStores, _ connection: PostgresConnection, _ simulator: StoreSimulator
    ) async throws -> [Request] {
        let metrics = stores.directory.appendingPathComponent("storerecon.prom").path
        let first = try await run(stores, ["run", "refund-requests", "--metrics-file", metrics])
        #expect(first.status == 0, "\(first.stderr.suffix(2000))")
        let found = try requests(connection)
        #expect(found.count == 24)
        #expect(simulator.consumptionAnswers().isEmpty)
        let answers = try connection.query(
            "SELECT answer, count(*)::int AS n FROM refund_request GROUP BY answer ORDER BY answer"
        ).map { "\(try $0.decode("answer", as: String.self)) \(try $0.decode("n", as: Int.self))" }
        let missed = found.filter(\.missed).count
        let unsupported = found.filter { $0.familyShared && !$0.missed }.count
        #expect(missed > 0)
        #expect(answers.contains("missed \(missed)"), "\(answers)")
        #expect(answers.contains("no_facts \(24 - missed - unsupported)"), "\(answers)")
        return found
    }

    /// status names the missed requests and exits 1; the metrics file written by the first run says the same.
    func expectStatusAndMetricsCountWaitingAndMissed(_ stores: SimulatedStores, _ found: [Request]) async throws {
        let missed = found.filter(\.missed).count
        let unsupported = found.filter { $0.familyShared && !$0.missed }.count
        let status = try await run(stores, ["status"])
        #expect(status.status == 1)
        #expect(status.stdout.contains("\(missed) refund requests missed their deadline in the last day"))
        #expect(status.stdout.contains("refund requests: \(24 - missed - unsupported) waiting"), "\(status.stdout)")
        let metrics = stores.directory.appendingPathComponent("storerecon.prom").path
        let prom = try String(contentsOfFile: metrics, encoding: .utf8)
        let ios = "{app=\"demo-ios\"}"
        #expect(prom.contains("storerecon_refund_requests_waiting\(ios) \(24 - missed - unsupported)\n"), "\(prom)")
        #expect(prom.contains("storerecon_refund_requests_missed_last_day\(ios) \(missed)\n"))
        #expect(prom.contains("storerecon_refund_requests_nearest_deadline_timestamp_seconds\(ios) "))
    }

    /// A file with a bad line writes nothing.
    func expectBadFactsFileWritesNothing(
        _ stores: SimulatedStores, _ connection: PostgresConnection, _ found: [Request]
    ) async throws {
        let bad = stores.directory.appendingPathComponent("bad.csv").path
        try (factsCSV(found) + "apple,123,maybe,delivered,10,false,2026-07-01T00:00:00Z\n")
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let rejected = try await run(stores, ["import", "consumption", bad])
        #expect(rejected.status != 0)
        #expect(rejected.stderr.contains("line 26: customer_consented"), "\(rejected.stderr)")
        #expect(try connection.query("SELECT count(*)::int AS n FROM consumption_fact")[0].decode("n") == 0)
    }

    /// Second run: every answerable request is answered once, with the body worked out by hand in `expectedBody`.
    /// Returns how many requests were answerable.
    func expectSecondRunAnswersEachRequestOnce(
        _ stores: SimulatedStores, _ simulator: StoreSimulator, _ found: [Request]
    ) async throws -> Int {
        let second = try await run(stores, ["run", "refund-requests"])
        #expect(second.status == 0, "\(second.stderr.suffix(2000))")
        let sent = Dictionary(uniqueKeysWithValues: simulator.consumptionAnswers().map { ($0.transactionId, $0) })
        var expectedCount = 0
        for (index, request) in found.enumerated() {
            let expected =
                request.missed || request.familyShared
                ? nil : expectedBody(index, autoRenewable: request.type == "Auto-Renewable Subscription")
            #expect(sent[request.transactionId]?.body == expected, "request \(index): \(request)")
            #expect(sent[request.transactionId].map(\.calls) ?? 1 == 1)
            if expected != nil { expectedCount += 1 }
        }
        #expect(sent.count == expectedCount)
        #expect(expectedCount > 0)
        return expectedCount
    }

    /// Third run: nothing more is sent; the store's decisions are joined to the answers.
    func expectThirdRunSendsNothingAndJoinsDecisions(
        _ stores: SimulatedStores, _ connection: PostgresConnection, _ simulator: StoreSimulator,
        _ expectedCount: Int
    ) async throws {
        let third = try await run(stores, ["run", "refund-requests"])
        #expect(third.status == 0, "\(third.stderr.suffix(2000))")
        #expect(simulator.consumptionAnswers().allSatisfy { $0.calls == 1 })
        #expect(simulator.consumptionAnswers().count == expectedCount)
        let decisions = try connection.query(
            """
            SELECT count(*) FILTER (WHERE answer = 'answered')::int AS answered,
                   count(*) FILTER (WHERE answer = 'no_consent')::int AS no_consent,
                   count(*) FILTER (WHERE decision = 'declined' AND body_sent->>'refundPreference' = 'DECLINE')::int
                       AS declined,
                   count(*) FILTER (WHERE decision = 'refunded' AND body_sent->>'refundPreference' LIKE 'GRANT%')::int
                       AS refunded
            FROM refund_request
            """)[0]
        #expect(try decisions.decode("answered", as: Int.self) == expectedCount)
        #expect(try decisions.decode("no_consent", as: Int.self) > 0)
        #expect(
            try decisions.decode("declined", as: Int.self) + decisions.decode("refunded", as: Int.self)
                == expectedCount)
    }

    /// The report: its totals are the sum of its groups, and its detail has one row per request; `--output` writes
    /// the same report to a file, and nothing to stdout.
    func expectReportAddsUpToOneRowPerRequest(_ stores: SimulatedStores, _ expectedCount: Int) async throws {
        let day = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        let grouped = try await run(
            stores,
            [
                "report", "refund-requests", "--from", "2026-01-01", "--to", day, "--by", "outcome",
                "--format", "json",
            ])
        #expect(grouped.status == 0, "\(grouped.stderr)")
        struct Report: Decodable {
            struct Group: Decodable { var keys: [String]; var counts: [Int] }
            var columns: [String]
            var groups: [Group]
            var totals: [Int]
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(grouped.stdout.utf8))
        for column in report.columns.indices {
            #expect(report.totals[column] == report.groups.map { $0.counts[column] }.reduce(0, +))
        }
        #expect(report.totals[0] == 24)
        #expect(report.totals[report.columns.firstIndex(of: "answered") ?? 0] == expectedCount)
        let detail = try await run(
            stores,
            ["report", "refund-requests", "--from", "2026-01-01", "--to", day, "--detail", "--format", "csv"])
        #expect(detail.stdout.split(separator: "\r\n").count == 25, "\(detail.stdout)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("requests-\(UUID()).csv").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let written = try await run(
            stores,
            [
                "report", "refund-requests", "--from", "2026-01-01", "--to", day, "--detail", "--format", "csv",
                "--output", file,
            ])
        #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == detail.stdout)
    }
}
