import Foundation
import Postgres
import Reports
import Testing

/// Accounting entries: a refund stays in its period, a reversal is a negative entry in its own; periods by the
/// store's time or by when storerecon recorded the entry; store environments; the sale's own price.
@Suite("RefundReport books refunds and reversals as entries")
struct RefundReportEntriesTests {
    typealias Row = ReportLedger.Row

    /// October's refund, reversed in November: October keeps the refund, November has the reversal as a negative
    /// entry (10.99 back out), beside November's own 4.99 refund: 4.99 - 10.99 = -6.00, quantity 1 - 1 = 0.
    @Test func aReversalIsANegativeEntryInItsOwnMonthAndTheRefundStaysInItsMonth() throws {
        let ledger = try ReportLedger(prefix: "entries")
        try ledger.insert([
            Row(order: "t10", refundedAt: "2026-10-20T10:00:00Z", gross: 10990, reversedAt: "2026-11-05T12:00:00Z"),
            Row(order: "t11", refundedAt: "2026-11-03T10:00:00Z", gross: 4990),
        ])
        let october = try ledger.text(RefundReportOptions(from: "2026-10-01", to: "2026-10-31", by: [.platform]), .csv)
        #expect(october.contains("\r\napple,USD,store,1,1,10.99,,,0,0,0,0\r\n"), "\(october)")
        let november = try ledger.text(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-30", by: [.platform]), .csv)
        #expect(november.contains("\r\napple,USD,store,1,0,-6.00,,,0,0,1,0\r\n"), "\(november)")

        var entries: [RefundReport.Detail] = []
        try RefundReport.forEachDetail(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-30", detail: true), on: ledger.connection
        ) { entries.append($0) }
        #expect(entries.map(\.orderId) == ["t11", "t10"])
        #expect(entries.map(\.entry) == [.refund, .reversal])
        let reversal = try #require(entries.last)
        #expect(reversal.day == "2026-11-05" && reversal.quantity == -1)
        #expect(reversal.grossNanos == Decimal(-10_990_000_000))
        let rows = try ledger.csvRows(RefundReportOptions(from: "2026-11-01", to: "2026-11-30", detail: true))
        let columns = try #require(rows.first)
        let last = try #require(rows.dropFirst().last)
        let cell = { (name: String) in last[columns.firstIndex(of: name)!] }
        #expect(cell("entry") == "reversal" && cell("gross") == "-10.99" && cell("day") == "2026-11-05")
        #expect(cell("refunded_at") == "2026-10-20T10:00:00.000Z" && cell("reversed_at") == "2026-11-05T12:00:00.000Z")
    }

    /// `--basis recorded`: October by when storerecon recorded the entries. A refund of 30 October recorded on
    /// 2 November, and a reversal of 31 October recorded on 3 November, belong to November; what arrives later about
    /// October never changes October's figures.
    @Test func theRecordedBasisKeepsAClosedMonthsFigures() throws {
        let ledger = try ReportLedger(prefix: "basis")
        try ledger.insert([
            Row(order: "t20", refundedAt: "2026-10-10T00:00:00Z", recordedAt: "2026-10-11T00:00:00Z", gross: 1000),
            Row(order: "t21", refundedAt: "2026-10-30T00:00:00Z", recordedAt: "2026-11-02T00:00:00Z", gross: 2000),
            Row(
                order: "t22", refundedAt: "2026-10-05T00:00:00Z", recordedAt: "2026-10-05T01:00:00Z", gross: 3000,
                reversedAt: "2026-10-31T12:00:00Z"),
        ])
        try ledger.connection.execute(
            """
            INSERT INTO apple_refund_reversal (app_id, transaction_id, reversed_at, recorded_at)
            VALUES ('ios', 't22', '2026-10-31T12:00:00Z', '2026-11-03T00:00:00Z')
            """)
        func october(_ basis: RefundReportOptions.Basis) throws -> String {
            try ledger.text(
                RefundReportOptions(from: "2026-10-01", to: "2026-10-31", by: [.platform], basis: basis), .csv)
        }
        // By the store's time: 1.00 + 2.00 + 3.00 - 3.00 = 3.00, three refunds, one reversal.
        #expect(try october(.event).contains("\r\napple,USD,store,3,2,3.00,,,0,0,1,0\r\n"))
        // As recorded: t20 and t22 only.
        let closed = try october(.recorded)
        #expect(closed.contains("\r\napple,USD,store,2,2,4.00,,,0,0,0,0,0\r\n"), "\(closed)")
        let november = try ledger.text(
            RefundReportOptions(from: "2026-11-01", to: "2026-11-30", by: [.platform], basis: .recorded), .csv)
        #expect(november.contains("\r\napple,USD,store,1,0,-1.00,,,0,0,1,0,0\r\n"), "\(november)")

        // Later: a late October refund, and October's t20 reversed; both recorded in late November.
        try ledger.insert([
            Row(order: "t23", refundedAt: "2026-10-15T00:00:00Z", recordedAt: "2026-11-20T00:00:00Z", gross: 7000)
        ])
        try ledger.connection.execute("UPDATE refund SET reversed_at = '2026-10-20T00:00:00Z' WHERE order_id = 't20'")
        try ledger.connection.execute(
            """
            INSERT INTO apple_refund_reversal (app_id, transaction_id, reversed_at, recorded_at)
            VALUES ('ios', 't20', '2026-10-20T00:00:00Z', '2026-11-21T00:00:00Z')
            """)
        #expect(try october(.recorded) == closed)
        // 1.00 + 2.00 + 3.00 + 7.00 - 3.00 - 1.00 = 9.00: the store's time restates October.
        #expect(try october(.event).contains("\r\napple,USD,store,4,2,9.00,,,0,0,2,0\r\n"))
    }

    /// Apple sandbox refunds are test purchases: not in the default (production) figures.
    @Test func sandboxRefundsAreApartFromProduction() throws {
        let ledger = try ReportLedger(prefix: "environment")
        try ledger.insert([
            Row(order: "p1", refundedAt: "2026-11-10T00:00:00Z", gross: 10000, environment: "Production"),
            Row(order: "s1", refundedAt: "2026-11-10T01:00:00Z", gross: 5000, environment: "Sandbox"),
            Row(
                app: "droid", platform: "google", order: "GPA.1", refundedAt: "2026-11-10T02:00:00Z", gross: 3000,
                environment: nil),
        ])
        func report(_ environment: RefundReportOptions.EnvironmentFilter, by: [RefundReportOptions.Dimension])
            throws -> String
        {
            try ledger.text(
                RefundReportOptions(from: "2026-11-10", to: "2026-11-10", by: by, environment: environment), .csv)
        }
        let production = try report(.production, by: [.platform])
        #expect(production.contains("\r\napple,USD,store,1,1,10.00,,,0,0,0,0\r\n"), "\(production)")
        #expect(production.contains("\r\ngoogle,USD,store,1,1,3.00,,,0,0,0,0\r\n"), "\(production)")
        let sandbox = try report(.sandbox, by: [.platform])
        #expect(sandbox.split(separator: "\r\n").dropFirst() == ["apple,USD,store,1,1,5.00,,,0,0,0,0"], "\(sandbox)")
        let all = try report(.all, by: [.environment])
        #expect(all.hasPrefix("environment,currency,source,refunds,"), "\(all)")
        #expect(all.contains("\r\nproduction,USD,store,2,2,13.00,,,0,0,0,0\r\n"), "\(all)")
        #expect(all.contains("\r\nsandbox,USD,store,1,1,5.00,,,0,0,0,0\r\n"), "\(all)")
        #expect(throws: ReportError.self) { try RefundReportOptions.parseEnvironment("staging") }
    }

    /// `price` is the sale's own price in the row's currency, with that currency's decimals: Apple's signed price;
    /// Google's order total from the Orders API (never the configured price, here 1990 in the configuration's JPY,
    /// on a row the order put in BRL); blank when storerecon does not know it.
    @Test func thePriceIsTheSalesOwnPriceInItsCurrency() throws {
        let ledger = try ReportLedger(prefix: "price")
        try ledger.insert([
            Row(
                app: "droid", platform: "google", order: "GPA.50", refundedAt: "2026-11-10T00:00:00Z",
                gross: 24_900_000_000, tax: 0, precision: 9, currency: "BRL", priceMilli: 1_990_000),
            Row(
                order: "t50", refundedAt: "2026-11-10T01:00:00Z", gross: 1_990_000, currency: "JPY",
                priceMilli: 1_990_000),
            Row(
                app: "droid", platform: "google", order: "GPA.51", refundedAt: "2026-11-10T02:00:00Z", gross: 990,
                source: "configured", currency: "USD", priceMilli: 990),
        ])
        try ledger.connection.execute(
            """
            INSERT INTO google_order (app_id, order_id, status, currency, total_nanos)
            VALUES ('droid', 'GPA.50', 'ok', 'BRL', 24900000000)
            """)
        let rows = try ledger.csvRows(RefundReportOptions(from: "2026-11-10", to: "2026-11-10", detail: true))
        let columns = try #require(rows.first)
        let order = try #require(columns.firstIndex(of: "order_id"))
        let price = try #require(columns.firstIndex(of: "price"))
        let gross = try #require(columns.firstIndex(of: "gross"))
        let byOrder = Dictionary(uniqueKeysWithValues: rows.dropFirst().map { ($0[order], $0) })
        #expect(byOrder["GPA.50"]?[price] == "24.90")
        #expect(byOrder["t50"]?[price] == "1990" && byOrder["t50"]?[gross] == "1990")
        #expect(byOrder["GPA.51"]?[price] == "")
    }
}
