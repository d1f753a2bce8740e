import Foundation
import Postgres
import Reconciler
import Reports
import TestSupport
import Testing

/// `report refund-requests` against a real database: the money refunded and kept per currency, unknown amounts
/// counted as unknown (never 0), totals that are the sums of the detail rows, and the HTML chart.
@Suite("RefundRequestReport against a real database")
struct RefundRequestReportTests {
    let from = Date(timeIntervalSince1970: 1_782_864_000)  // 2026-07-01T00:00:00Z
    let to = Date(timeIntervalSince1970: 1_782_864_000 + 2 * 86_400)

    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "requestreport"))
        try Migrator(connection: connection).migrate()
        let setup = """
            INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.x'), ('droid', 'google', 'com.x');
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, received_at, deadline, answer, decision)
            VALUES ('ios', 'apple', 'n1', 't1', '2026-07-01T01:00:00Z', '2026-07-01T13:00:00Z', 'answered', 'refunded'),
                   ('ios', 'apple', 'n2', 't2', '2026-07-01T02:00:00Z', '2026-07-01T14:00:00Z', 'answered', 'refunded'),
                   ('ios', 'apple', 'n3', 't3', '2026-07-01T03:00:00Z', '2026-07-01T15:00:00Z', 'answered', 'declined'),
                   ('ios', 'apple', 'n4', 't4', '2026-07-02T03:00:00Z', '2026-07-02T15:00:00Z', 'missed', NULL),
                   ('ios', 'apple', 'n5', 't5', '2026-07-02T04:00:00Z', '2026-07-02T16:00:00Z', 'answered', 'refunded'),
                   ('droid', 'google', 'm1', 'GPA.1', '2026-07-02T01:00:00Z', '2026-07-03T01:00:00Z', 'answered',
                    'declined'),
                   ('droid', 'google', 'm2', 'GPA.2', '2026-07-02T02:00:00Z', '2026-07-03T02:00:00Z', 'answered', NULL),
                   ('droid', 'google', 'm3', 'GPA.3', '2026-07-05T02:00:00Z', '2026-07-06T02:00:00Z', 'answered',
                    'declined');
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, gross_amount, amount_precision,
                                amount_source, currency, reversed_at, payload)
            VALUES ('ios', 'apple', 't1', '2026-07-01T20:00:00Z', 'full', 10990, 3, 'store', 'USD', NULL, '{}'),
                   ('ios', 'apple', 't2', '2026-07-01T20:00:00Z', 'full', NULL, NULL, NULL, 'USD', NULL, '{}'),
                   ('ios', 'apple', 't5', '2026-07-02T20:00:00Z', 'full', 990, 3, 'store', 'USD',
                    '2026-07-02T21:00:00Z', '{}'),
                   ('droid', 'google', 'GPA.2', '2026-07-02T20:00:00Z', 'full', 1234567891, 9, 'store', 'usd', NULL,
                    '{}');
            INSERT INTO google_order (app_id, order_id, status, currency, total_nanos)
            VALUES ('droid', 'GPA.1', 'ok', 'EUR', 4990000000), ('droid', 'GPA.3', 'ok', 'EUR', 1000000000)
            """
        for statement in setup.components(separatedBy: ";\n") { try connection.execute(statement) }
        return connection
    }

    @Test func moneyRefundedAndKeptPerCurrencyIsTheSumOfTheDetailRowsAndUnknownStaysUnknown() throws {
        let connection = try database()
        defer { connection.close() }
        let report = try RefundRequestReport.gather(from: from, to: to, by: [.platform], on: connection)
        // t1 10.99 + GPA.2 1.234567891 rounded to 1.23; t2's amount is unknown; t5's refund was reversed; t3 was
        // declined at a price nobody knows; GPA.1 declined at 4.99 EUR; GPA.3 is outside the period.
        #expect(
            report.money == [
                .init(currency: "EUR", refunded: "0.00", refundedUnknown: 0, kept: "4.99", keptUnknown: 0),
                .init(currency: "USD", refunded: "12.22", refundedUnknown: 1, kept: "0.00", keptUnknown: 0),
                .init(currency: "unknown", refunded: "0.00", refundedUnknown: 0, kept: "", keptUnknown: 1),
            ])
        let detail = try RefundRequestReport.detail(from: from, to: to, on: connection)
        let column = { (name: String) in RefundRequestReport.detailColumns.firstIndex(of: name)! }
        var sums: [String: (refunded: Decimal, kept: Decimal, unknown: Int)] = [:]
        for row in detail where !row[column("currency")].isEmpty {
            var sum = sums[row[column("currency")]] ?? (0, 0, 0)
            for (name, cell) in [("refunded", row[column("refunded")]), ("kept", row[column("kept")])]
            where !cell.isEmpty {
                guard let value = Decimal(string: cell) else {
                    sum.unknown += 1
                    continue
                }
                if name == "refunded" { sum.refunded += value } else { sum.kept += value }
            }
            sums[row[column("currency")]] = sum
        }
        for line in report.money {
            let sum = try #require(sums[line.currency])
            // A sum of unknown amounts only is empty: its known part is 0.
            #expect(sum.refunded == Decimal(string: line.refunded.isEmpty ? "0" : line.refunded))
            #expect(sum.kept == Decimal(string: line.kept.isEmpty ? "0" : line.kept))
            #expect(sum.unknown == line.refundedUnknown + line.keptUnknown)
        }
        #expect(detail.first { $0[column("request_id")] == "n2" }?[column("refunded")] == "unknown")
        let csv = try report.render("csv")
        #expect(csv.contains("\r\ncurrency,refunded,refunded_unknown,kept,kept_unknown\r\nEUR,0.00,0,4.99,0\r\n"))
    }

    @Test func theHTMLChartsRequestsPerDayByOutcome() throws {
        let connection = try database()
        defer { connection.close() }
        let report = try RefundRequestReport.gather(from: from, to: to, by: [], on: connection)
        let daily = try RefundRequestReport.daily(from: from, to: to, on: connection)
        #expect(daily.filter { $0.day == "2026-07-01" }.map(\.requests).reduce(0, +) == 3)
        let html = report.html(daily: daily, days: ["2026-07-01", "2026-07-02"], title: "Refund requests")
        #expect(html.contains("<svg") && html.contains("<title>2026-07-01 refunded: 2</title>"))
        #expect(html.contains("<title>2026-07-02 missed: 1</title>"))
        #expect(html.contains("<td>USD</td><td>12.22</td>"))
        // Over years, a bar per month, as the refund report's chart: July's bar holds both days' requests.
        let years = try #require(RefundRequestReport.days("2025-01-01", "2027-12-31", timeZone: "UTC"))
        let long = report.html(daily: daily, days: years.days, title: "Refund requests")
        #expect(long.contains("Requests per month by outcome"))
        #expect(long.contains("<title>2026-07-01 to 2026-07-31 refunded: 3</title>"), "\(long)")
        #expect(long.components(separatedBy: "<text").count < 100, "one label per month at most")
    }

    /// The days are `reports.timeZone`'s, as in `report refunds`: a July in Los Angeles runs from 07:00 UTC on
    /// July 1 to 07:00 UTC on August 1, and a request received at 06:30 UTC on August 1 is of July 31.
    @Test func theDaysAreThoseOfTheReportsTimeZone() throws {
        let july = try #require(RefundRequestReport.days("2026-07-01", "2026-07-31", timeZone: "America/Los_Angeles"))
        #expect(july.from == Date(timeIntervalSince1970: 1_782_889_200))
        #expect(july.to == Date(timeIntervalSince1970: 1_785_567_600))
        #expect(july.days.count == 31 && july.days.first == "2026-07-01" && july.days.last == "2026-07-31")
        // November 1 in Los Angeles has 25 hours; the days still step by one.
        let fall = try #require(RefundRequestReport.days("2026-10-31", "2026-11-02", timeZone: "America/Los_Angeles"))
        #expect(fall.days == ["2026-10-31", "2026-11-01", "2026-11-02"])
        #expect(fall.to.timeIntervalSince(fall.from) == 3 * 86_400 + 3600)
        #expect(RefundRequestReport.days("2026-02-30", "2026-03-01", timeZone: "UTC") == nil)
        #expect(RefundRequestReport.days("2026-03-02", "2026-03-01", timeZone: "UTC") == nil)

        let connection = try database()
        defer { connection.close() }
        try connection.execute("UPDATE refund_request SET received_at = '2026-08-01T06:30:00Z' WHERE request_id = 'n2'")
        let daily = try RefundRequestReport.daily(
            from: july.from, to: july.to, timeZone: "America/Los_Angeles", on: connection)
        #expect(daily.contains { $0.day == "2026-07-31" })
        #expect(!daily.contains { $0.day == "2026-08-01" })
    }
}

extension RefundRequestReportTests {
    /// An app configured with Apple's sandbox is left out of every part of the report unless asked for, as in
    /// `report refunds`: its requests, its money and its days on the chart.
    @Test func sandboxAppsAreLeftOutUnlessAskedFor() throws {
        let connection = try database()
        defer { connection.close() }
        try connection.execute(
            """
            INSERT INTO app (id, platform, store_app_id, environment) VALUES ('ios-test', 'apple', 'com.x', 'sandbox')
            """)
        try connection.execute(
            """
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, received_at, deadline, answer,
                                        decision, currency, price_nanos)
            VALUES ('ios-test', 'apple', 's1', 'st1', '2026-07-01T05:00:00Z', '2026-07-01T17:00:00Z', 'answered',
                    'declined', 'USD', 99990000000)
            """)
        let production = try RefundRequestReport.gather(from: from, to: to, by: [.app], on: connection)
        #expect(!production.groups.contains { $0.keys == ["ios-test"] })
        #expect(production.totals[0] == 7)
        #expect(production.money.first { $0.currency == "USD" }?.kept == "0.00")
        let sandbox = try RefundRequestReport.gather(
            from: from, to: to, by: [.app], environment: .sandbox, on: connection)
        #expect(sandbox.groups.map(\.keys) == [["ios-test"]] && sandbox.totals[0] == 1)
        #expect(sandbox.money.map(\.kept) == ["99.99"])
        let all = try RefundRequestReport.gather(from: from, to: to, by: [.app], environment: .all, on: connection)
        #expect(all.totals[0] == 8)
        // Test money is summed apart from real money in the same currency.
        let usd = all.money.filter { $0.currency == "USD" }
        #expect(usd.count == 2 && usd.contains { $0.environment == "sandbox" && $0.kept == "99.99" })
        #expect(usd.contains { $0.environment == nil && $0.kept == "0.00" })
        #expect(try all.render("csv").contains("\r\nUSD (sandbox),0.00,0,99.99,0\r\n"))
        let detail = try RefundRequestReport.detail(from: from, to: to, on: connection)
        #expect(detail.count == 7 && !detail.contains { $0.contains("s1") })
        #expect(try RefundRequestReport.detail(from: from, to: to, environment: .all, on: connection).count == 8)
        let days = try RefundRequestReport.daily(from: from, to: to, on: connection).map(\.requests).reduce(0, +)
        let allDays = try RefundRequestReport.daily(from: from, to: to, environment: .all, on: connection)
        #expect(days == 7 && allDays.map(\.requests).reduce(0, +) == 8)
    }
}
