import Foundation
import Postgres
import Reports
import Testing

/// Printed figures foot: in every row net = gross - tax as printed, every total is the sum of the printed rows,
/// and the detail ties to the groups; the reports say they print major units.
@Suite("RefundReport figures foot as printed")
struct RefundReportFootingTests {
    typealias Row = ReportLedger.Row

    /// Three EUR refunds of 1.015 with 0.165 tax, one a day, and a JPY one. Worked by hand: each refund rounds
    /// half to even on its own: 1.015 -> 1.02 (101.5 -> 102), 0.165 -> 0.16 (16.5 -> 16), net 1.02 - 0.16 = 0.86;
    /// the total is 3 x 1.02 = 3.06, tax 0.48, net 2.58 (rounding the exact sum once would give 3.04 and 0.50).
    static let rows = [
        Row(
            app: "droid", platform: "google", order: "GPA.1", refundedAt: "2026-11-01T10:00:00Z", gross: 1015,
            tax: 165, currency: "EUR"),
        Row(
            app: "droid", platform: "google", order: "GPA.2", refundedAt: "2026-11-02T10:00:00Z", gross: 1015,
            tax: 165, currency: "EUR"),
        Row(
            app: "droid", platform: "google", order: "GPA.3", refundedAt: "2026-11-03T10:00:00Z", gross: 1015,
            tax: 165, currency: "EUR"),
        Row(
            app: "droid", platform: "google", order: "GPA.4", refundedAt: "2026-11-03T11:00:00Z", gross: 1_500_500,
            tax: 136_409, currency: "JPY"),
    ]

    @Test func everyRowNetsAndEveryTotalIsTheSumOfItsRows() throws {
        let ledger = try ReportLedger(prefix: "footing")
        try ledger.insert(Self.rows)
        let options = RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: [.day])
        let csv = try ledger.text(options, .csv)
        #expect(csv.contains("\r\n2026-11-01,EUR,store,1,1,1.02,0.16,0.86,0,0,0,0\r\n"), "\(csv)")
        // JPY: 1500.5 -> 1500 (even), tax 136.409 -> 136, net 1364.
        #expect(csv.contains("\r\n2026-11-03,JPY,store,1,1,1500,136,1364,0,0,0,0\r\n"), "\(csv)")
        let table = try ledger.text(options, .table)
        let totals = table.split(separator: "\n").filter { $0.hasPrefix("TOTAL") }.map {
            $0.split(separator: " ").map(String.init)
        }
        #expect(totals.contains(["TOTAL", "EUR", "store", "3", "3", "3.06", "0.48", "2.58", "0", "0", "0", "0"]))
        #expect(totals.contains(["TOTAL", "JPY", "store", "1", "1", "1500", "136", "1364", "0", "0", "0", "0"]))

        // The same rules checked on every row of every printing: grouped by day, and the detail.
        let grouped = try ledger.csvRows(options)
        try Self.expectRowsNet(grouped)
        let detail = try ledger.csvRows(RefundReportOptions(from: "2026-11-01", to: "2026-11-03", detail: true))
        try Self.expectRowsNet(detail)
        // The detail adds up to the totals, currency by currency.
        for (currency, gross) in [("EUR", "3.06"), ("JPY", "1500")] {
            #expect(try Self.sum(detail, column: "gross", currency: currency) == Decimal(string: gross))
            #expect(try Self.sum(grouped, column: "gross", currency: currency) == Decimal(string: gross))
        }
    }

    /// `--rates`: each printed converted row is rounded once (EUR at 1.1 USD: 3.06 x 1.1 = 3.366 -> 3.37 over
    /// the three days, rows 1.122 -> 1.12 each); the grand total is the sum of the printed rows: 1.12 x 3 = 3.36.
    @Test func convertedTotalsAreTheSumsOfTheConvertedRows() throws {
        let ledger = try ReportLedger(prefix: "footrates")
        try ledger.insert(Array(Self.rows.prefix(3)))
        let rates = try RefundRates.parse(
            "date,currency,rate_to_USD\n2026-11-01,EUR,1.1\n2026-11-02,EUR,1.1\n2026-11-03,EUR,1.1\n")
        let options = RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: [.day], rates: rates)
        let csv = try ledger.text(options, .csv)
        // Row: gross 1.02 x 1.1 = 1.122 -> 1.12; tax 0.16 x 1.1 = 0.176 -> 0.18; net 1.12 - 0.18 = 0.94.
        #expect(csv.contains("\r\n2026-11-01,EUR,store,1,1,1.02,0.16,0.86,0,0,0,0,1.12,0.18,0.94\r\n"), "\(csv)")
        let table = try ledger.text(options, .table)
        #expect(table.contains("TOTAL in USD (store): gross 3.36, tax 0.54, net 2.82"), "\(table)")
        // The currency's TOTAL row too: the sum of its printed rows, not 3.06 x 1.1 rounded once (3.37).
        let euros = table.split(separator: "\n").first { $0.hasPrefix("TOTAL") && $0.contains(" EUR ") }
        #expect(euros?.split(separator: " ").suffix(3) == ["3.36", "0.54", "2.82"], "\(table)")
        let html = try ledger.text(options, .html)
        let grand = try #require(html.components(separatedBy: "<h2>Grand total in USD</h2>").last)
        #expect(
            grand.contains("<td>store</td><td class=\"n\">3.36</td><td class=\"n\">0.54</td><td class=\"n\">2.82</td>"))
    }

    /// Every report says what it prints: major units, never "minor units".
    @Test(arguments: RefundReport.Format.allCases)
    func headersSayMajorUnits(_ format: RefundReport.Format) throws {
        let ledger = try ReportLedger(prefix: "units")
        try ledger.insert(Self.rows)
        for detail in [false, true] {
            let text = try ledger.text(
                RefundReportOptions(from: "2026-11-01", to: "2026-11-03", by: detail ? [] : [.day], detail: detail),
                format)
            #expect(!text.contains("minor units"), "\(format) detail \(detail)")
            if format != .csv { #expect(text.contains("major units"), "\(format) detail \(detail)") }
        }
    }

    /// Whether each row with gross, tax and net printed has net = gross - tax exactly.
    static func expectRowsNet(_ rows: [[String]]) throws {
        let header = try #require(rows.first)
        let gross = try #require(header.firstIndex(of: "gross"))
        let tax = try #require(header.firstIndex(of: "tax"))
        let net = try #require(header.firstIndex(of: "net"))
        var checked = 0
        for row in rows.dropFirst() where !row[tax].isEmpty {
            let values = [row[gross], row[tax], row[net]].map { Decimal(string: $0) }
            #expect(values[2] != nil && values[2] == values[0].flatMap { g in values[1].map { g - $0 } }, "\(row)")
            checked += 1
        }
        #expect(checked == rows.count - 1)
    }

    static func sum(_ rows: [[String]], column: String, currency: String) throws -> Decimal {
        let header = try #require(rows.first)
        let value = try #require(header.firstIndex(of: column))
        let unit = try #require(header.firstIndex(of: "currency"))
        return rows.dropFirst().filter { $0[unit] == currency }.reduce(Decimal(0)) {
            $0 + (Decimal(string: $1[value]) ?? 0)
        }
    }
}
