import Foundation
import Postgres
import Reports
import Testing

@testable import Reports

/// Issue 37 items 8 and 9: a currency whose tax only Google states has its totals per platform, so Google's tax is
/// not dropped with Apple's; the HTML page reads at 1280 px, with human headers and a money chart per currency.
@Suite("RefundReport totals per platform and the HTML page")
struct RefundReportPlatformTotalsTests {
    typealias Row = ReportLedger.Row

    /// USD: Apple 9.99 (no tax stated) and Google 4.99 with 0.41 tax on 2026-11-01, Google 10.00 with 0.80 tax on
    /// 2026-11-02; EUR: Google 1.19 with 0.19 tax. By hand: USD Apple 9.99, tax blank; USD Google 4.99 + 10.00 =
    /// 14.99, tax 0.41 + 0.80 = 1.21, net 13.78; EUR 1.19, 0.19, 1.00 in one total (only Google sells in EUR).
    static func ledger(_ prefix: String) throws -> ReportLedger {
        let ledger = try ReportLedger(prefix: prefix)
        try ledger.insert([
            Row(order: "t1", refundedAt: "2026-11-01T10:00:00Z", gross: 9990),
            Row(
                app: "droid", platform: "google", order: "GPA.1", refundedAt: "2026-11-01T11:00:00Z", gross: 4990,
                tax: 410),
            Row(
                app: "droid", platform: "google", order: "GPA.2", refundedAt: "2026-11-02T11:00:00Z", gross: 10000,
                tax: 800),
            Row(
                app: "droid", platform: "google", order: "GPA.3", refundedAt: "2026-11-02T12:00:00Z", gross: 1190,
                tax: 190, currency: "EUR"),
        ])
        return ledger
    }

    static func words(_ table: String) -> [[String]] {
        table.split(separator: "\n").filter { $0.hasPrefix("TOTAL") }.map { $0.split(separator: " ").map(String.init) }
    }

    @Test(arguments: [[RefundReportOptions.Dimension.day], [.platform], [.product]])
    func aCurrencyWhoseTaxOnlyOneStoreStatesIsTotalledPerPlatform(_ by: [RefundReportOptions.Dimension]) throws {
        let ledger = try Self.ledger("platformtotals")
        let options = RefundReportOptions(from: "2026-11-01", to: "2026-11-02", by: by)
        let totals = Self.words(try ledger.text(options, .table)).map { Array($0.prefix(9)) }
        #expect(totals.contains(["TOTAL", "apple", "USD", "store", "1", "1", "9.99", "0", "0"]), "\(totals)")
        #expect(totals.contains(["TOTAL", "google", "USD", "store", "2", "2", "14.99", "1.21", "13.78"]), "\(totals)")
        #expect(totals.contains(["TOTAL", "EUR", "store", "1", "1", "1.19", "0.19", "1.00", "0"]), "\(totals)")
        #expect(totals.count == 3)

        let json = try JSONSerialization.jsonObject(with: Data(try ledger.text(options, .json).utf8)) as? [String: Any]
        let parts = try #require(json?["totals"] as? [[String: Any]])
        let google = try #require(parts.first { $0["platform"] as? String == "google" })
        #expect(google["currency"] as? String == "USD" && google["tax"] as? String == "1.21")
        #expect(google["net"] as? String == "13.78")
        let apple = try #require(parts.first { $0["platform"] as? String == "apple" })
        #expect(apple["gross"] as? String == "9.99" && apple["tax"] is NSNull)
        let euro = try #require(parts.first { $0["currency"] as? String == "EUR" })
        #expect(euro["platform"] == nil && euro["tax"] as? String == "0.19")

        let html = try ledger.text(options, .html)
        let section = try #require(html.components(separatedBy: "<h2>Totals per currency</h2>").last)
        #expect(section.contains("<th>Currency</th><th>Amount source</th><th>Store</th>"), "\(section)")
        #expect(
            section.contains(
                #"<td>USD</td><td>store</td><td>google</td><td class="n">2</td><td class="n">2</td>"#
                    + #"<td class="n">14.99</td><td class="n">1.21</td><td class="n">13.78</td>"#), "\(section)")
        #expect(html.contains("its totals are given per platform"))
    }

    /// The page: human headers, no column of snake_case, every cell on one line, the counts that are not in the
    /// amounts in one column, and beside the count chart one money chart per currency on its own scale.
    @Test func thePageReadsAt1280Pixels() throws {
        let ledger = try Self.ledger("htmlpage")
        let options = RefundReportOptions(from: "2026-11-01", to: "2026-11-02", by: [.day, .platform])
        let html = try ledger.text(options, .html)
        let headers = html.matches(of: #/<th>([^<]*)</th>/#).prefix(10).map { String($0.output.1) }
        #expect(
            headers == [
                "Day", "Store", "Currency", "Amount source", "Refunds", "Units", "Gross", "Tax", "Net",
                "Notes",
            ])
        #expect(!html.contains("<th>unknown_amount_refunds</th>") && html.contains("td { white-space: nowrap; }"))
        #expect(html.contains(#"<div class="charts">"#))
        #expect(html.contains("<figcaption>USD refunded per day</figcaption>"))
        #expect(html.contains("<figcaption>EUR refunded per day</figcaption>"))
        // USD: the highest bar is 2026-11-01's, 9.99 + 4.99 = 14.98, up to 15 whole USD: 4 gridlines of 4 USD.
        let usd = try #require(
            html.components(separatedBy: "<figcaption>USD").last?.components(separatedBy: "</figure>").first)
        let gridlines = usd.matches(of: #/text-anchor="end">(\d+)</text>/#).map { String($0.output.1) }
        #expect(gridlines == ["0", "4", "8", "12", "16"])
        #expect(usd.contains("<title>2026-11-01 apple: 9.99 USD</title>") && usd.contains("google: 10.00 USD</title>"))
    }

    @Test func theNotesColumnSaysWhatIsNotInTheAmountsInWords() {
        let group = RefundReport.Group(
            keys: [:], refunds: 3, quantity: 3, grossNanos: nil, taxNanos: nil, unknownAmount: 2, familyRevokes: 0,
            notRevoked: 1, reversed: 1)
        #expect(RefundReport.htmlNotes(group) == "2 amount unknown, 1 reversed, 1 not revoked")
        #expect(RefundReport.header("gross_EUR") == "Gross (EUR)" && RefundReport.header("order_id") == "Order")
    }

    @Test func storeAmountsWithTaxPerCurrencyAndSourceApart() throws {
        let connection = try ReportLedger(prefix: "reportsources").connection
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, part_key, product_id, refunded_at, reason_label,
                                refund_type, quantity, gross_amount, tax_amount, amount_precision, amount_source,
                                currency, buyer_country, payload)
            VALUES ('droid', 'google', 'GPA.10', '', 'pro', '2026-11-05T10:00:00Z', 'other', 'full', 1,
                    1190000000, 190000000, 9, 'store', 'EUR', 'DE', '{}'),
                   ('droid', 'google', 'GPA.11', '', 'pro', '2026-11-05T11:00:00Z', 'other', 'full', 1,
                    1195000000, 190800000, 9, 'store', 'EUR', 'DE', '{}'),
                   ('droid', 'google', 'GPA.12', '', 'pro', '2026-11-05T12:00:00Z', 'other', 'full', 1,
                    1500500000000, 136409090909, 9, 'store', 'JPY', 'JP', '{}'),
                   ('droid', 'google', 'GPA.13', '', 'pro', '2026-11-05T13:00:00Z', 'other', 'full', 1,
                    3250500000, 0, 9, 'store', 'KWD', 'KW', '{}'),
                   ('droid', 'google', 'GPA.14', '', 'pro', '2026-11-05T14:00:00Z', 'other', 'full', 2,
                    9980, NULL, 3, 'configured', 'EUR', NULL, '{}')
            """)
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, part_key, product_id, refunded_at, reason_label,
                                refund_type, quantity, currency, amount_note, payload)
            VALUES ('ios', 'apple', 't9', '', 'family', '2026-11-05T15:00:00Z', 'other', 'family_revoke', 1, 'USD',
                    'family_revoke', '{}')
            """)
        let report = try RefundReport.run(
            RefundReportOptions(from: "2026-11-05", to: "2026-11-05", by: [.platform, .country]), on: connection)
        let csv = report.csv()
        #expect(csv.hasPrefix("platform,country,currency,source,refunds,quantity,gross,tax,net,"))
        // Each refund rounded half to even, then added: 1.19 + 1.20 (1.195) = 2.39; tax 0.19 + 0.19 (0.1908) = 0.38;
        // net 2.39 - 0.38 = 2.01.
        #expect(csv.contains("google,DE,EUR,store,2,2,2.39,0.38,2.01,0,0,0,0\r\n"), "\(csv)")
        // JPY has no minor unit: 1500.5 -> 1500 (even), tax 136.409... -> 136, net 1364.09... -> 1364.
        #expect(csv.contains("google,JP,JPY,store,1,1,1500,136,1364,0,0,0,0\r\n"), "\(csv)")
        #expect(csv.contains("google,KW,KWD,store,1,1,3.250,0.000,3.250,0,0,0,0\r\n"), "\(csv)")
        // Estimated amounts stay apart from store amounts.
        #expect(csv.contains("google,,EUR,configured,1,2,9.98,,,0,0,0,0\r\n"), "\(csv)")
        // A family revoke moves no money: not a refund, no amount.
        #expect(csv.contains("apple,,USD,none,0,0,,,,0,1,0,0\r\n"), "\(csv)")
        let output = RefundReportOutput.memory()
        try RefundReport.write(
            RefundReportOptions(from: "2026-11-05", to: "2026-11-05", detail: true), format: .csv, on: connection,
            to: output)
        let rows = output.text
        #expect(rows.contains(",1.19,0.19,1.00,EUR,DE,store,,"), "\(rows)")
        #expect(rows.contains(",family_revoke,1,,,,,,USD,,,revoked (family),"), "\(rows)")
    }
}
