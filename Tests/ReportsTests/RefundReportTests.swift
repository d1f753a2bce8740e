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
        // (app, platform, order, part, product, refunded_at, reason, type, quantity, amount, currency, reversed).
        // t3 is reversed on 15 December: a negative entry then, outside every range of these tests.
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
                                    refund_type, quantity, gross_amount, amount_precision, amount_source, currency,
                                    reversed_at, payload)
                VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7, $8, $9, $10, CASE WHEN $10::bigint IS NOT NULL THEN 3 END,
                        CASE WHEN $10::bigint IS NOT NULL THEN 'store' END, $11, CASE WHEN $12 THEN '2026-12-15T00:00:00Z'::timestamptz END, '{}')
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
        // t3, reversed in December, stays a refund of 1 November.
        let appleUSD = try #require(keyed["2026-11-01 apple USD"])
        #expect(appleUSD.refunds == 3)
        #expect(appleUSD.grossNanos == Decimal(27_480_000_000))
        #expect(appleUSD.reversed == 0)
        #expect(keyed["2026-11-02 apple EUR"]?.grossNanos == Decimal(4_990_000_000))
        let googleUnknown = try #require(keyed["2026-11-01 google unknown"])
        #expect(googleUnknown.refunds == 1 && googleUnknown.unknownAmount == 1 && googleUnknown.grossNanos == nil)
        #expect(keyed["2026-11-02 google USD"]?.quantity == 2)
        // 2026-11-03 is outside the range.
        #expect(report.groups.allSatisfy { $0.keys["day"] != "2026-11-03" })
        // Each refund rounded half to even on its own, then added: 10.99 + 5.50 (5.495) + 10.99 = 27.48. Apple
        // states no tax, so tax and net are empty; an unknown amount is empty, never 0.00.
        let csv = report.csv()
        #expect(csv.contains("2026-11-01,apple,USD,store,3,3,27.48,,,0,0,0,0\r\n"), "\(csv)")
        #expect(csv.contains("2026-11-01,google,unknown,none,1,1,,,,1,0,0,0\r\n"), "\(csv)")
        #expect(!csv.contains("0.00"))
    }

    @Test func daysFollowTheReportTimeZone() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-02", by: [.day], timeZone: "America/Los_Angeles"),
            on: connection)
        let days = Dictionary(grouping: report.groups, by: { $0.keys["day"]! }).mapValues {
            $0.reduce(0) { $0 + $1.refunds }
        }
        // 2026-11-02T05:00Z is Nov 1 in Los Angeles (PDT ends at 09:00Z that day); 07:59:59Z is still Nov 1 (PST).
        #expect(days["2026-11-01"] == 6)
        // 2026-11-03T08:00Z is the first second of Nov 3 in PST: outside the range.
        #expect(days["2026-11-02"] == nil)
    }

    @Test func detailListsEveryRefundIncludingReversed() throws {
        let options = RefundReportOptions(from: "2026-11-01", to: "2026-11-03", detail: true)
        var details: [RefundReport.Detail] = []
        try RefundReport.forEachDetail(options, on: connection) { details.append($0) }
        #expect(details.count == 7)
        #expect(details.filter { $0.reversedAt != nil }.map(\.orderId) == ["t3"])
        let output = RefundReportOutput.memory()
        try RefundReport.write(options, format: .csv, on: connection, to: output)
        let csv = output.text
        #expect(csv.hasPrefix(RefundReport.detailColumns.joined(separator: ",") + "\r\n"))
        #expect(csv.contains("\"premium, \"\"gold\"\"\""))
        #expect(csv.contains(",partial_quantity,2,,,1.98,,,USD,,store,,,"), "\(csv)")
    }

    @Test func jsonAndTableAndHTMLRender() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: [.platform, .product]), on: connection)
        let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any]
        let groups = try #require(json?["groups"] as? [[String: Any]])
        let coins = try #require(groups.first { $0["product"] as? String == "coins" })
        #expect(coins["gross"] as? String == "2.97")
        #expect(coins["tax"] is NSNull)
        let unknown = try #require(groups.first { $0["currency"] as? String == "unknown" })
        #expect(unknown["gross"] is NSNull && unknown["unknown_amount_refunds"] as? Int == 1)
        let table = report.table()
        #expect(table.contains("TOTAL"))
        #expect(table.contains("major units"))
        let html = report.html()
        #expect(html.contains("<svg"))
        #expect(html.contains("fill=\"#4a78c2\""))
        #expect(html.contains("fill=\"#3aa757\""))
        #expect(html.contains("premium, &quot;gold&quot;"))
        #expect(!html.contains("<script"))
        // Gridline labels are whole numbers at their true heights: y = top - height * label / axis maximum (the
        // count chart, the first; the money charts follow it).
        let countChart = try #require(html.components(separatedBy: "</figure>").first)
        let labels = countChart.matches(of: #/<text x="44" y="(\d+)" font-size="11" text-anchor="end">(\d+)</text>/#)
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
        // The table's rows: the notes after it (the Google coverage line) are prose, not columns.
        let rows = lines.prefix { !$0.hasPrefix("Google: ") }
        #expect(rows.count < lines.count, "the Google coverage note follows the table")
        for line in rows.dropFirst() {
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

    /// `--rates`: each day's sums (of refunds rounded each) at that day's rate, added up exactly and rounded once
    /// per row; worked by hand: Apple USD 2026-11-01: (10.99 + 5.50 + 10.99) x 0.9 = 24.732 EUR -> 24.73; Google USD
    /// 2026-11-02: 1.98 x 0.8 = 1.584 EUR -> 1.58; Apple EUR 4.99 stays 4.99. Store total, the sum of the printed
    /// rows: 24.73 + 1.58 + 4.99 = 31.30 EUR (not 31.306 -> 31.31).
    @Test func ratesConvertEachDayAtItsRateAndAMissingRateIsAnError() throws {
        let rates = try RefundRates.parse(
            "date,currency,rate_to_EUR\n2026-11-01,USD,0.9\n2026-11-02,USD,0.8\n2026-11-02,GBP,1.15\n")
        #expect(rates.base == "EUR")
        // A spreadsheet's export with a byte-order mark reads the same.
        let marked = try RefundRates.parse("\u{FEFF}date,currency,rate_to_EUR\n2026-11-01,USD,0.9\n")
        #expect(marked.base == "EUR")
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-02", by: [.platform], rates: rates), on: connection)
        let csv = report.csv()
        #expect(
            csv.hasPrefix(
                "platform,currency,source,refunds,quantity,gross,tax,net,unknown_amount_refunds,"
                    + "family_revokes,reversed_refunds,not_revoked_refunds,gross_EUR,tax_EUR,net_EUR\r\n"), "\(csv)")
        #expect(csv.contains("apple,USD,store,3,3,27.48,,,0,0,0,0,24.73,,\r\n"), "\(csv)")
        #expect(csv.contains("google,USD,store,1,2,1.98,,,0,0,0,0,1.58,,\r\n"), "\(csv)")
        #expect(csv.contains("apple,EUR,store,1,1,4.99,,,0,0,0,0,4.99,,\r\n"), "\(csv)")
        let totals = report.convertedTotals()
        #expect(totals.count == 1 && totals[0].0 == "store")
        #expect(totals[0].1.convertedGrossNanos == Decimal(string: "31300000000"))
        let table = report.table()
        #expect(table.contains("TOTAL in EUR (store): gross 31.30, tax unknown, net unknown"), "\(table)")
        #expect(table.contains("rates used (1 unit in EUR): 2026-11-01 USD 0.9, 2026-11-02 USD 0.8"), "\(table)")
        let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any]
        let used = (json?["rates"] as? [String: Any])?["used"] as? [[String: Any]]
        #expect(used?.count == 2)
        // 2026-11-03 has a Google USD refund and no USD rate.
        let error = #expect(throws: ReportError.self) {
            try RefundReport.run(
                RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: [.platform], rates: rates),
                on: connection)
        }
        #expect(error?.message.contains("no rate for USD on 2026-11-03") == true, "\(String(describing: error))")
        // The rates file's content is input (exit 1, as the README says), not configuration.
        #expect(error?.code == .input)
        for bad in [
            "day,currency,rate\n", "date,currency,rate_to_EUR\n2026-11-01,USD,-1\n",
            "date,currency,rate_to_EUR\n2026-13-01,USD,1\n", "date,currency,rate_to_EUR\n2026-11-01,USD,1e3\n",
        ] {
            #expect(throws: ReportError.self) { try RefundRates.parse(bad) }
        }
    }

    /// Google amounts in nanos with their tax, several currencies, a family revoke and an estimated amount.
    /// The table's TOTAL rows, the JSON `totals` and the HTML totals table carry the same figures per currency and
    /// amount source: finance gets one answer whichever format it reads.
    @Test func tableJSONAndHTMLHaveTheSameTotals() throws {
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: [.platform, .product]), on: connection)
        let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any]
        let totals = try #require(json?["totals"] as? [[String: Any]])
        func cell(_ value: Any?) -> String { (value as? String) ?? (value as? Int).map(String.init) ?? "" }
        // A currency whose tax one store states and the other does not has a total per platform.
        let keys = ["currency", "source"] + (report.totalsSplitByPlatform ? ["platform"] : [])
        let fromJSON = Set(
            totals.map { total in
                (keys + ["refunds", "quantity", "gross", "tax", "net"]).map { cell(total[$0]) }.joined(separator: "|")
            })
        #expect(fromJSON.count == report.totalsByCurrency().count && fromJSON.count >= 2, "\(fromJSON)")
        // The HTML totals table: its rows' key and amount cells.
        let html = report.html()
        let section = try #require(html.components(separatedBy: "<h2>Totals per currency</h2>").last)
        let fromHTML = Set(
            section.components(separatedBy: "<tr>").dropFirst(2).map { row in
                row.matches(of: #/<td[^>]*>([^<]*)</td>/#).prefix(keys.count + 5).map { String($0.output.1) }
                    .joined(separator: "|")
            })
        #expect(fromHTML == fromJSON)
        // The table's TOTAL rows: the same refunds, quantity and gross for each total.
        let table = report.table().split(separator: "\n").filter { $0.hasPrefix("TOTAL") }
        #expect(table.count == fromJSON.count, "\(table)")
        for total in totals {
            let figures = [cell(total["refunds"]), cell(total["quantity"]), cell(total["gross"])].filter { !$0.isEmpty }
            #expect(
                table.contains { line in
                    let words = line.split(separator: " ").map(String.init)
                    return words.indices.contains { words[$0...].starts(with: figures) }
                }, "\(figures) not in \(table)")
        }
    }
}
