import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// `storerecon run refund-requests` and `import consumption`, the built binary against the simulator's Apple
/// endpoints on loopback and a real database.
@Suite("storerecon run refund-requests, end to end")
struct RefundRequestsTests {
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var spec = ScenarioSpec(
            seed: 39, anchorMillis: now, subscriptions: 80, oneTimePurchases: 60, refunds: 0, historyDays: 40,
            futureDays: 1, sandboxShare: 0)
        spec.consumptionRequests = 24
        var options = SimulatorOptions(scenario: spec)
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        return options
    }

    static let rules = """
            refundRequests:
              rules:
                - { when: { delivered: false }, prefer: grant }
                - { when: { consumedPercentAtLeast: 50 }, prefer: decline }
              default: grant_prorated

        """

    struct Request {
        var transactionId: String
        var originalId: String
        var type: String
        var familyShared: Bool
        var missed: Bool
    }

    func run(_ stores: SimulatedStores, _ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await BuiltExecutable("storerecon").run(arguments + ["--config", stores.configPath])
    }

    func requests(_ connection: PostgresConnection) throws -> [Request] {
        try connection.query(
            """
            SELECT transaction_id, original_id, product_type, family_shared, deadline <= now() AS missed
            FROM refund_request ORDER BY transaction_id
            """
        ).map { row in
            Request(
                transactionId: try row.decode("transaction_id"), originalId: try row.decode("original_id"),
                type: try row.decode("product_type"), familyShared: try row.decode("family_shared"),
                missed: try row.decode("missed"))
        }
    }

    /// The body Apple must receive for the request at `index` of the facts written below, by hand.
    func expectedBody(_ index: Int, autoRenewable: Bool) -> String? {
        switch index % 4 {
        case 1:  // delivered, 75 % consumed: rules[1], decline
            return autoRenewable
                ? #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE","sampleContentProvided":false}"#
                : #"{"consumptionPercentage":75000,"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE","sampleContentProvided":false}"#
        case 2:  // undelivered: rules[0], grant with 0 %
            return autoRenewable
                ? #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","refundPreference":"GRANT_FULL","sampleContentProvided":true}"#
                : #"{"consumptionPercentage":0,"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","refundPreference":"GRANT_FULL","sampleContentProvided":true}"#
        case 3:  // delivered, nothing consumed: default grant_prorated; a full grant on a one-time purchase
            return autoRenewable
                ? #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_PRORATED","sampleContentProvided":false}"#
                : #"{"consumptionPercentage":0,"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_FULL","sampleContentProvided":false}"#
        default:  // no consent: nothing sent
            return nil
        }
    }

    func factsCSV(_ requests: [Request]) -> String {
        var csv =
            "platform,purchase_id,customer_consented,delivery_status,consumption_percent,sample_content_provided,as_of\n"
        for (index, request) in requests.enumerated() {
            // Every other purchase is named by its original transaction id, as a backend keyed by subscription would.
            let id = index % 2 == 0 ? request.transactionId : request.originalId
            switch index % 4 {
            case 0: csv += "apple,\(id),false,delivered,10,false,2026-07-01T00:00:00Z\n"
            case 1: csv += "apple,\(id),true,delivered,75,false,2026-07-01T00:00:00Z\n"
            case 2: csv += "apple,\(id),true,undelivered_other,40.5,true,2026-07-01T00:00:00Z\n"
            default: csv += "apple,\(id),true,delivered,0,false,2026-07-01T00:00:00Z\n"
            }
        }
        return csv
    }

    @Test func everyAnswerableRequestIsAnsweredOnceWithTheExpectedBody() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "refundrequests")
            let yaml = try String(contentsOfFile: stores.configPath, encoding: .utf8)
            try yaml.replacingOccurrences(of: "    platform: apple\n", with: "    platform: apple\n" + Self.rules)
                .write(toFile: stores.configPath, atomically: true, encoding: .utf8)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }

            // First run: the requests are found; no facts yet, so nothing is sent.
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

            // status names the missed requests and exits 1.
            let status = try await run(stores, ["status"])
            #expect(status.status == 1)
            #expect(status.stdout.contains("\(missed) refund requests missed their deadline in the last day"))
            #expect(status.stdout.contains("refund requests: \(24 - missed - unsupported) waiting"), "\(status.stdout)")
            // The metrics file says the same.
            let prom = try String(contentsOfFile: metrics, encoding: .utf8)
            let ios = "{app=\"demo-ios\"}"
            #expect(prom.contains("storerecon_refund_requests_waiting\(ios) \(24 - missed - unsupported)\n"), "\(prom)")
            #expect(prom.contains("storerecon_refund_requests_missed_last_day\(ios) \(missed)\n"))
            #expect(prom.contains("storerecon_refund_requests_nearest_deadline_timestamp_seconds\(ios) "))

            // A file with a bad line writes nothing.
            let bad = stores.directory.appendingPathComponent("bad.csv").path
            try (factsCSV(found) + "apple,123,maybe,delivered,10,false,2026-07-01T00:00:00Z\n")
                .write(toFile: bad, atomically: true, encoding: .utf8)
            let rejected = try await run(stores, ["import", "consumption", bad])
            #expect(rejected.status != 0)
            #expect(rejected.stderr.contains("line 26: customer_consented"), "\(rejected.stderr)")
            #expect(try connection.query("SELECT count(*)::int AS n FROM consumption_fact")[0].decode("n") == 0)

            let facts = stores.directory.appendingPathComponent("facts.csv").path
            try factsCSV(found).write(toFile: facts, atomically: true, encoding: .utf8)
            let imported = try await run(stores, ["import", "consumption", facts])
            #expect(imported.status == 0, "\(imported.stderr)")

            // Second run: every answerable request is answered once, with the body worked out above.
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

            // Third run: nothing more is sent; the store's decisions are joined to the answers.
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

            // The report: its totals are the sum of its groups, and its detail has one row per request.
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
            // --output writes the same report to a file, and nothing to stdout.
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
}
