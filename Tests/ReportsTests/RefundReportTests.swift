import Foundation
import Postgres
import Reconciler
import Reports
import TestSupport
import Testing

@Suite("RefundReport against a real database")
struct RefundReportTests {
    let connection: PostgresConnection

    init() throws {
        connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "report"))
        try Migrator(connection: connection).migrate()
        try connection.execute(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.x'), ('droid', 'google', 'com.x')
            """)
        // (app, platform, order, part, product, refunded_at, reason, type, quantity, amount, currency, reversed)
        let rows: [(String, String, String, String, String, String, String, String, Int, Int64?, String?, Bool)] = [
            ("ios", "apple", "t1", "", "premium", "2026-11-01T10:00:00Z", "other", "full", 1, 10990, "USD", false),
            (
                "ios", "apple", "t2", "", "premium", "2026-11-01T11:00:00Z", "app_issue", "prorated", 1, 5495, "USD",
                false
            ),
            ("ios", "apple", "t3", "", "premium", "2026-11-01T12:00:00Z", "other", "full", 1, 10990, "USD", true),
            ("ios", "apple", "t4", "", "basic", "2026-11-02T05:00:00Z", "other", "full", 1, 4990, "EUR", false),
            (
                "droid", "google", "GPA.1", "", "premium, \"gold\"", "2026-11-01T09:00:00Z", "remorse", "full", 1, nil,
                nil, false
            ),
            (
                "droid", "google", "GPA.2", "1795000000000:2", "coins", "2026-11-02T07:59:59Z", "fraud",
                "partial_quantity", 2, 1980, "USD", false
            ),
            ("droid", "google", "GPA.3", "", "coins", "2026-11-03T08:00:00Z", "fraud", "full", 1, 990, "USD", false),
        ]
        for row in rows {
            try connection.execute(
                """
                INSERT INTO refund (app_id, platform, order_id, part_key, product_id, refunded_at, reason_label,
                                    refund_type, quantity, amount_milli, currency, reversed_at, payload)
                VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7, $8, $9, $10, $11,
                        CASE WHEN $12 THEN now() END, '{}')
                """,
                [row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10, row.11])
        }
    }

    @Test func groupsByDayAndPlatformWithExactAmountsAndNetting() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-02", by: [.day, .platform]), on: connection)
        let keyed = Dictionary(
            uniqueKeysWithValues: report.groups.map {
                ("\($0.keys["day"]!) \($0.keys["platform"]!) \($0.keys["currency"]!)", $0)
            })
        let appleUSD = try #require(keyed["2026-11-01 apple USD"])
        #expect(appleUSD.refunds == 2)
        #expect(appleUSD.amountMilli == 16485)
        #expect(appleUSD.reversed == 1)
        #expect(keyed["2026-11-02 apple EUR"]?.amountMilli == 4990)
        let googleUnknown = try #require(keyed["2026-11-01 google "])
        #expect(googleUnknown.refunds == 1 && googleUnknown.unknownAmount == 1 && googleUnknown.amountMilli == 0)
        #expect(keyed["2026-11-02 google USD"]?.quantity == 2)
        // 2026-11-03 is outside the range.
        #expect(report.groups.allSatisfy { $0.keys["day"] != "2026-11-03" })
        #expect(report.csv().contains("2026-11-01,apple,USD,2,2,16.485,0,1\r\n"))
    }

    @Test func daysFollowTheReportTimeZone() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-02", by: [.day], timeZone: "America/Los_Angeles"),
            on: connection)
        let days = Dictionary(grouping: report.groups, by: { $0.keys["day"]! }).mapValues {
            $0.reduce(0) { $0 + $1.refunds }
        }
        // 2026-11-02T05:00Z is Nov 1 in Los Angeles (PDT ends at 09:00Z that day); 07:59:59Z is still Nov 1 (PST).
        #expect(days["2026-11-01"] == 5)
        // 2026-11-03T08:00Z is the first second of Nov 3 in PST: outside the range.
        #expect(days["2026-11-02"] == nil)
    }

    @Test func detailListsEveryRefundIncludingReversed() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-03", detail: true), on: connection)
        #expect(report.details.count == 7)
        #expect(report.details.filter { $0.reversedAt != nil }.map(\.orderId) == ["t3"])
        let csv = report.csv()
        #expect(csv.hasPrefix(RefundReport.detailColumns.joined(separator: ",") + "\r\n"))
        #expect(csv.contains("\"premium, \"\"gold\"\"\""))
        #expect(csv.contains(",partial_quantity,2,,,1.98,USD,,"))
    }

    @Test func jsonAndTableAndHTMLRender() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: [.platform, .product]), on: connection)
        let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any]
        let groups = try #require(json?["groups"] as? [[String: Any]])
        let coins = try #require(groups.first { $0["product"] as? String == "coins" })
        #expect(coins["amount"] as? String == "2.97")
        #expect(coins["amount_milli"] as? Int == 2970)
        let table = report.table()
        #expect(table.contains("TOTAL"))
        #expect(table.contains("store-reported"))
        let html = report.html()
        #expect(html.contains("<svg"))
        #expect(html.contains("fill=\"#4a78c2\""))
        #expect(html.contains("fill=\"#3aa757\""))
        #expect(html.contains("premium, &quot;gold&quot;"))
        #expect(!html.contains("<script"))
        // Gridline labels are whole numbers at their true heights: y = top - height * label / axis maximum.
        let labels = html.matches(of: #/<text x="44" y="(\d+)" font-size="11" text-anchor="end">(\d+)</text>/#)
            .map { (y: Int($0.output.1)! - 4, value: Int($0.output.2)!) }
        try #require(labels.count == 5)
        let axisTop = try #require(labels.last)
        #expect(labels.first?.value == 0)
        for label in labels {
            #expect(label.y == 250 - 240 * label.value / axisTop.value, "label \(label.value) is drawn at \(label.y)")
        }
    }

    /// A group with an empty value in the first column (a refund of unknown currency) keeps every column in place,
    /// and each TOTAL row is labelled even when currency is the first column.
    @Test func tableColumnsStayAlignedAndTotalsAreLabelled() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: [.currency, .platform]), on: connection)
        let lines = report.table().split(separator: "\n").dropFirst().map(String.init)
        let header = try #require(lines.first)
        let refunds = try #require(header.range(of: "refunds")).lowerBound.utf16Offset(in: header)
        #expect(lines.count > 3)
        for line in lines.dropFirst() {
            let characters = Array(line)
            #expect(characters.count > refunds, "\(line)")
            guard characters.count > refunds else { continue }
            #expect(characters[refunds].isNumber && characters[refunds - 1] == " ", "misaligned: \(line)")
        }
        let totals = lines.filter { $0.hasPrefix("TOTAL") }
        #expect(totals.count == 3, "one per currency, the unknown one too: \(totals)")
        #expect(totals.contains { $0.hasPrefix("TOTAL USD") })
    }

    @Test func reportsNeverWrite() throws {
        let before = try connection.query("SELECT count(*) AS n, max(xmin::text) AS x FROM refund")[0]
        _ = try RefundReport.run(RefundReportOptions(from: "2026-11-01", to: "2026-11-03"), on: connection)
        let after = try connection.query("SELECT count(*) AS n, max(xmin::text) AS x FROM refund")[0]
        #expect(try before.decode("n", as: Int.self) == after.decode("n", as: Int.self))
        #expect(try before.decode("x", as: String.self) == after.decode("x", as: String.self))
    }

    @Test func badRequestsAreClearErrors() throws {
        #expect(throws: ReportError.self) {
            try RefundReport.run(RefundReportOptions(from: "2026-11-05", to: "2026-11-01"), on: connection)
        }
        #expect(throws: ReportError.self) {
            try RefundReport.run(RefundReportOptions(from: "yesterday", to: "2026-11-01"), on: connection)
        }
        #expect(throws: ReportError.self) {
            try RefundReport.run(
                RefundReportOptions(from: "2026-11-01", to: "2026-11-01", timeZone: "Nowhere/City"),
                on: connection)
        }
        let error = #expect(throws: ReportError.self) { try RefundReportOptions.parseDimensions("day,weekday") }
        #expect(error?.message.contains("weekday") == true)
    }

    @Test(arguments: [
        (10990, "10.99"), (5495, "5.495"), (0, "0.00"), (-1000, "-1.00"), (1, "0.001"),
        (Int64.max, "9223372036854775.807"),
    ])
    func moneyIsExact(_ milli: Int64, _ text: String) {
        #expect(Money.units(milli) == text)
    }
}
