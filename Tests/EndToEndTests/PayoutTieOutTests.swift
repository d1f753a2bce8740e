import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// `run nightly` (which fetches the financial reports when configured), `sync payouts` and `report tie-out` of the
/// built binary against the simulator, whose earnings and FINANCIAL reports are generated from its own scenario.
///
/// The scenario starts 29 days back, so the previous US-Pacific month's last days are in it while the voided list
/// (30 days) still shows them; on the 30th and 31st of a month nothing of the previous one is left to tie out.
@Suite("sync payouts and report tie-out, end to end")
struct PayoutTieOutTests {
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                // Refunds end two hours before the wall clock: the truth hardly moves while the test runs.
                seed: 26, anchorMillis: now - 2 * 3_600_000, subscriptions: 1500, oneTimePurchases: 400, refunds: 400,
                historyDays: 29, futureDays: 0, sandboxShare: 0))
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        options.quotas.appleRefundHistoryPerSecond = 1000
        return options
    }

    static func pacificDay(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "America/Los_Angeles")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    /// The Apple fiscal months (4-4-5 weeks from the day after September's last Saturday, worked out here by hand)
    /// that have ended and hold a production refund that moved money and was not reversed within the period.
    static func appleMonthsWithRefunds(_ truth: GroundTruth) -> Set<String> {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "America/Los_Angeles")!
        func lastSaturdayOfSeptember(_ year: Int) -> Date {
            var date = calendar.date(from: DateComponents(year: year, month: 9, day: 30))!
            while calendar.component(.weekday, from: date) != 7 {
                date = calendar.date(byAdding: .day, value: -1, to: date)!
            }
            return date
        }
        var months: Set<String> = []
        let now = Date(timeIntervalSince1970: Double(truth.nowMillis) / 1000)
        let year = calendar.component(.year, from: now)
        for fiscalYear in [year, year + 1] {
            var start = calendar.date(byAdding: .day, value: 1, to: lastSaturdayOfSeptember(fiscalYear - 1))!
            for (index, weeks) in [4, 4, 5, 4, 4, 5, 4, 4, 5, 4, 4, 5].enumerated() {
                let next =
                    index == 11
                    ? calendar.date(byAdding: .day, value: 1, to: lastSaturdayOfSeptember(fiscalYear))!
                    : calendar.date(byAdding: .day, value: 7 * weeks, to: start)!
                let (from, to) = (Int64(start.timeIntervalSince1970 * 1000), Int64(next.timeIntervalSince1970 * 1000))
                let booked = truth.appleRefunds.contains {
                    $0.environment == "Production" && $0.revocationType != "FAMILY_REVOKE"
                        && $0.revocationDate >= from && $0.revocationDate < to && ($0.reversedDate ?? .max) > to
                }
                // Published once the period's last Pacific day is over.
                if booked, to <= truth.nowMillis {
                    let month = (index + 9) % 12 + 1
                    months.insert(String(format: "%04d-%02d", month >= 10 ? fiscalYear - 1 : fiscalYear, month))
                }
                start = next
            }
        }
        return months
    }

    /// The US-Pacific month before the truth's now (`YYYY-MM`) and its last day (`YYYY-MM-DD`).
    static func previousMonth(_ truth: GroundTruth) -> (month: String, lastDay: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "America/Los_Angeles")!
        let now = Date(timeIntervalSince1970: Double(truth.nowMillis) / 1000)
        let previous = calendar.date(byAdding: .month, value: -1, to: now)!
        let parts = calendar.dateComponents([.year, .month], from: previous)
        let month = String(format: "%04d-%02d", parts.year!, parts.month!)
        let days = calendar.range(of: .day, in: .month, for: previous)!.count
        return (month, "\(month)-\(String(format: "%02d", days))")
    }

    /// Whether a Google void of the previous US-Pacific month, before its last day (a refund on the last day is
    /// booked the next day, in the next month's report), is in the scenario.
    static func previousMonthHasGoogleRefunds(_ truth: GroundTruth) -> Bool {
        let (month, lastDay) = previousMonth(truth)
        return truth.googleVoids.contains {
            let day = pacificDay($0.voidedTimeMillis)
            return day.hasPrefix(month) && day != lastDay
        }
    }

    /// The JSON lines with every value as text (counts are numbers, an empty cause `null`).
    func lines(_ json: String) throws -> [[String: String]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let lines = try #require(object["lines"] as? [[String: Any]])
        return lines.map { line in line.mapValues { $0 is NSNull ? "" : "\($0)" } }
    }

    static let extra = "sync: { appleSweepCustomers: 0 }\n" + NightlyRunTests.fastAppleRefunds

    @Test func theNightFetchesTheReportsAndTheTieOutNamesEveryDifference() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "payouts", extraYAML: Self.extra, payouts: true)
            let binary = try BuiltExecutable("storerecon")
            let config = ["--config", stores.configPath]
            let csv = stores.directory.appendingPathComponent("subscriptions.csv")
            try SubscriptionExport.write(simulator.spec, to: csv)
            #expect(try await binary.run(["import", "subscriptions", csv.path] + config).status == 0)

            let night = try await binary.run(["run", "nightly"] + config)
            #expect(night.status == 0, "\(night.stderr.suffix(2000))")
            #expect(night.stderr.contains("sync-payouts"), "\(night.stderr.suffix(2000))")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            func reports() throws -> [String] {
                try connection.query(
                    "SELECT app_id || ' ' || month || ' ' || checksum || ' ' || row_count AS r FROM payout_report ORDER BY 1"
                ).map { try $0.decode("r") }
            }
            let stored = try reports()
            let google = try #require(stores.configuration.apps.first { $0.platform == .google })
            let apple = try #require(stores.configuration.apps.first { $0.platform == .apple })
            // Google publishes a month's earnings once it has closed with refunds booked in it; late in a month few
            // of the previous one's days are left in the scenario's 29, and there may be none.
            #expect(
                !Self.previousMonthHasGoogleRefunds(simulator.groundTruth())
                    || stored.contains { $0.hasPrefix(google.id + " ") }, "\(stored)")

            // Every call the store answered passed the shared quota gate first.
            for (api, endpoint) in [
                ("google.storage", SimulatorEndpoint.googleStorage), ("apple.financereports", .appleFinanceReports),
            ] {
                let gated: Int = try connection.query(
                    "SELECT coalesce(sum(used), 0)::int AS n FROM quota_day WHERE api = $1", [api])[0].decode("n")
                let answered = simulator.statistics().filter { $0.endpoint == endpoint }.reduce(0) { $0 + $1.granted }
                #expect(answered > 0 && gated >= answered, "\(api): \(gated) through the gate, \(answered) answered")
            }

            // Fetching again changes nothing: every object's generation is stored, every published month too.
            let again = try await binary.run(["sync", "payouts"] + config)
            #expect(again.status == 0, "\(again.stderr.suffix(1500))")
            #expect(again.stderr.contains("payouts: 0 fetched"), "\(again.stderr.suffix(1500))")
            #expect(!again.stderr.contains("new, 1 replaced"), "\(again.stderr.suffix(1500))")
            #expect(try reports() == stored)

            try checkGoogle(binary: binary, config: config, app: google.id, simulator: simulator)
            let appleMonths = try connection.query(
                "SELECT month FROM payout_report WHERE app_id = $1 ORDER BY month", [apple.id]
            ).map { try $0.decode("month", as: String.self) }
            #expect(Set(appleMonths) == Self.appleMonthsWithRefunds(simulator.groundTruth()), "\(stored)")
            for month in appleMonths {
                try checkApple(binary: binary, config: config, app: apple.id, month: month)
            }

            try await checkStatus(binary: binary, config: config)
        }
    }

    /// `status` names each app's tie-out; every line checked here names its cause, so it counts none without one.
    func checkStatus(binary: BuiltExecutable, config: [String]) async throws {
        let status = try await binary.run(["status", "--format", "json"] + config)
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let tieOuts = (object?["apps"] as? [[String: Any]] ?? []).compactMap { $0["tieOut"] as? [String: Any] }
        #expect(!tieOuts.isEmpty, "\(status.stdout.suffix(1500))")
        #expect(tieOuts.allSatisfy { $0["withoutCause"] as? Int == 0 }, "\(tieOuts)")
    }

    /// Google, the previous Pacific month: amounts tie exactly (they are the scenario's own prices); a refund on the
    /// month's last day is ledger_only with settlement_lag; a report_only order is a refund Google made without
    /// revoking, of an order storerecon never read.
    func checkGoogle(binary: BuiltExecutable, config: [String], app: String, simulator: StoreSimulator) throws {
        let truth = simulator.groundTruth()
        let (month, lastDay) = Self.previousMonth(truth)

        let outcome = try binary.run(
            ["report", "tie-out", "--month", month, "--app", app, "--format", "json", "--detail"] + config)
        #expect(outcome.status == 0, "\(outcome.stderr.suffix(1500))")
        let lines = try lines(outcome.stdout)
        // Refunds of the month that the voided list still shows, not on its last day: they must match. (On the 30th
        // and 31st of a month the previous one has left the list's 30 days and there are none.)
        let oldest = truth.nowMillis - 30 * 86_400_000 + 600_000
        let matchable = truth.googleVoids.contains {
            $0.recorded && $0.recordedTimeMillis >= oldest && Self.pacificDay($0.voidedTimeMillis).hasPrefix(month)
                && Self.pacificDay($0.voidedTimeMillis) != lastDay
        }
        #expect(!matchable || lines.contains { $0["status"] == "matched" }, "\(lines.prefix(5))")
        let lastDayOrders = Set(
            truth.googleVoids.filter { Self.pacificDay($0.voidedTimeMillis) == lastDay }.map(\.orderId)
                + truth.googleRefundsWithoutRevocation.filter { Self.pacificDay($0.refundMillis) == lastDay }.map(
                    \.orderId))
        // Refunds the ledger cannot hold yet: made without revocation, or voided but not yet recorded by Google (the
        // voided list shows a void once recorded, up to days late; the earnings report books it when it happened).
        let unrecorded = truth.googleVoids.filter { !$0.recorded }.map(\.orderId)
        let silent = Set(truth.googleRefundsWithoutRevocation.map(\.orderId) + unrecorded)
        for line in lines {
            let order = line["order_id"] ?? ""
            switch line["status"] {
            case "matched":
                #expect(line["ledger_amount"] == line["report_amount"], "\(line)")
                #expect(line["difference"]?.allSatisfy { "0.-".contains($0) } == true, "\(line)")
            case "ledger_only", "amount_differs":
                // Refunded on the last day (all of it, or a part after an earlier one): booked next month.
                #expect(line["cause"] == "settlement_lag", "\(line)")
                #expect(lastDayOrders.contains(order), "\(line)")
            case "report_only":
                // Google booked it without the ledger holding it: made without revocation (or not yet recorded),
                // or before the ledger's first sync reached back.
                #expect(["not_revoked_unseen", "before_history"].contains(line["cause"]), "\(line)")
                #expect(line["cause"] != "not_revoked_unseen" || silent.contains(order), "\(line)")
            default:
                Issue.record("unexpected line \(line)")
            }
        }
        // The CSV carries exactly the issue's columns, in order.
        let csv = try binary.run(
            ["report", "tie-out", "--month", month, "--app", app, "--format", "csv", "--detail"] + config)
        #expect(
            csv.stdout.hasPrefix(
                "store,app,currency,order_id,product,country,ledger_refunds,ledger_amount,report_refunds,"
                    + "report_amount,difference,status,cause,note\r\n"))
    }

    /// Apple, a fiscal month whose report was fetched: per product, country and currency the ledger's refunds and
    /// customer money equal the report's R rows, except where a refund was reversed after Apple booked it.
    func checkApple(binary: BuiltExecutable, config: [String], app: String, month: String) throws {
        let outcome = try binary.run(
            ["report", "tie-out", "--month", month, "--app", app, "--format", "json", "--detail"] + config)
        #expect(outcome.status == 0, "\(outcome.stderr.suffix(1500))")
        let lines = try lines(outcome.stdout)
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line["store"] == "apple" && line["order_id"] == "", "\(line)")
            if line["status"] != "matched" {
                // Reversed after Apple booked it: the report has the refund, the ledger no longer counts it.
                #expect(line["status"] == "differs" && line["cause"] == "reversal", "\(line)")
                #expect((Int(line["ledger_refunds"] ?? "") ?? 0) < (Int(line["report_refunds"] ?? "") ?? 0), "\(line)")
            } else {
                #expect(line["ledger_refunds"] == line["report_refunds"], "\(line)")
                #expect(line["ledger_amount"] == line["report_amount"], "\(line)")
            }
        }
    }
}
