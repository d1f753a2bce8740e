import Foundation
import Postgres
import StoreCalendar
import Testing

@testable import Reports

/// `--basis recorded` keeps a closed month's amounts: an amount the store states after the close is booked when it
/// was stated (`restated`), and the months together still add up to what `--basis event` books.
@Suite("A closed month keeps its amounts")
struct ClosedMonthAmountsTests {
    let ledger: TieOutLedger

    init() throws {
        ledger = try TieOutLedger(prefix: "closed_amounts")
        // Google's October, every refund recorded before its close (Nov 5):
        // P pending at the close, priced 4.99 on Nov 12; E a configured 5.00 USD estimate, stated 4.50 EUR on
        // Nov 12; Q 3.00 throughout; O pending, priced 2.00 on Nov 2, before the close.
        try ledger.google("GPA.P", "2026-10-20T12:00:00Z", gross: nil, recorded: "2026-10-21T00:00:00Z")
        try ledger.google("GPA.E", "2026-10-22T12:00:00Z", gross: 5_000_000_000, recorded: "2026-10-23T00:00:00Z")
        try ledger.google("GPA.Q", "2026-10-25T12:00:00Z", gross: 3_000_000_000, recorded: "2026-10-26T00:00:00Z")
        try ledger.google("GPA.O", "2026-10-26T12:00:00Z", gross: nil, recorded: "2026-10-27T00:00:00Z")
        try ledger.connection.execute(
            "UPDATE refund SET amount_source = 'configured', tax_amount = NULL WHERE order_id = 'GPA.E'")
        try ledger.googleReport(
            month: CalendarMonth(year: 2026, month: 10),
            [("GPA.Q", "Charge refund", -3_000_000_000, -3_000_000_000, "2026-10-25T12:00:00Z")])
        // Apple's fiscal October (Sep 27 - Oct 24): a1 estimated 9.00 at the close, reversed Oct 10, stated 9.99
        // on Nov 12; a2 estimated 9.00, stated 9.99 on Nov 12, reversed Nov 20 (Apple's November, still open).
        try ledger.apple(
            "a1", "2026-10-05T18:00:00Z", product: "pro", storefront: "USA", currency: "USD", milli: 9000,
            reversed: "2026-10-10T18:00:00Z", recorded: "2026-10-11T00:00:00Z")
        try ledger.apple(
            "a2", "2026-10-06T18:00:00Z", product: "pro", storefront: "USA", currency: "USD", milli: 9000,
            recorded: "2026-10-07T00:00:00Z")
        try ledger.connection.execute("UPDATE refund SET amount_source = 'configured' WHERE platform = 'apple'")
        try ledger.appleReport(
            month: CalendarMonth(year: 2026, month: 10), start: "2026-09-27", end: "2026-10-24",
            [("pro", "US", "USD", 1, 9_990_000_000)])
        try ledger.appleReport(
            month: CalendarMonth(year: 2026, month: 11), start: "2026-10-25", end: "2026-11-21", [])
        try ledger.connection.execute(
            "UPDATE payout_report SET closed_at = '2026-11-05T00:00:00Z' WHERE month = '2026-10'")
        try ledger.connection.execute(
            "UPDATE payout_report SET closed_at = '2026-12-05T00:00:00Z' WHERE month = '2026-11'")

        try restate("GPA.O", at: "2026-11-02T00:00:00Z", "gross_amount = 2000000000, tax_amount = 0")
        try restate("GPA.P", at: "2026-11-12T00:00:00Z", "gross_amount = 4990000000, tax_amount = 0")
        try restate(
            "GPA.E", at: "2026-11-12T00:00:00Z",
            "gross_amount = 4500000000, tax_amount = 0, currency = 'EUR', amount_source = 'store'")
        for id in ["a1", "a2"] {
            try restate(id, at: "2026-11-12T00:00:00Z", "gross_amount = 9990, amount_source = 'store'")
        }
        try ledger.connection.execute(
            "UPDATE refund SET reversed_at = '2026-11-20T18:00:00Z' WHERE order_id = 'a2'")
    }

    /// Changes the refund's amount columns as a writer does (the trigger keeps the change), dated `at`.
    func restate(_ order: String, at: String, _ set: String) throws {
        try ledger.connection.execute("UPDATE refund SET \(set) WHERE order_id = $1", [order])
        try ledger.connection.execute(
            """
            UPDATE refund_amount_change c SET changed_at = $2::timestamptz
            FROM refund r WHERE r.id = c.refund_id AND r.order_id = $1
            """, [order, at])
    }

    /// Gross per "platform currency source" of the month as each store books it, and the group counts.
    func figures(_ month: String, _ basis: RefundReportOptions.Basis) throws -> (
        gross: [String: Decimal], unknown: Int, restated: Int, refunds: Int
    ) {
        let periods = try StorePeriods.resolve(month: CalendarMonth(month), on: ledger.connection)
        let report = try RefundReport.run(
            .storeMonth(periods, by: [.platform, .currency, .source], basis: basis), on: ledger.connection)
        var gross: [String: Decimal] = [:]
        for group in report.groups {
            let key = ["platform", "currency", "source"].map { group.keys[$0] ?? "" }.joined(separator: " ")
            if let amount = group.grossNanos { gross[key, default: 0] += amount }
        }
        return (
            gross, report.groups.map(\.unknownAmount).reduce(0, +), report.groups.map(\.restated).reduce(0, +),
            report.groups.map(\.refunds).reduce(0, +)
        )
    }

    @Test func theTriggerKeepsOnlyChangesInAClosedPeriod() throws {
        let kept = try ledger.connection.query(
            """
            SELECT r.order_id, c.old_gross, c.new_gross, c.old_source, c.new_currency
            FROM refund_amount_change c JOIN refund r ON r.id = c.refund_id ORDER BY r.order_id
            """
        ).map { row in try row.decode("order_id", as: String.self) }
        #expect(kept == ["GPA.E", "GPA.O", "GPA.P", "a1", "a2"])

        // A refund of a month without a loaded report (the usual write of a Google amount, moments after its
        // voided row) and a change of the note alone keep nothing.
        try ledger.google("GPA.N", "2026-12-10T12:00:00Z", gross: nil, recorded: "2026-12-10T12:00:01Z")
        try ledger.connection.execute("UPDATE refund SET gross_amount = 1000000000 WHERE order_id = 'GPA.N'")
        try ledger.connection.execute("UPDATE refund SET amount_note = 'pending' WHERE order_id = 'GPA.Q'")
        func count() throws -> Int64 {
            try ledger.connection.query("SELECT count(*) AS n FROM refund_amount_change")[0].decode("n")
        }
        #expect(try count() == 5)
        // The ledger's writer upserts: a conflict's update is kept as any other.
        try ledger.connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, payload, gross_amount)
            VALUES ('droid', 'google', 'GPA.Q', '2026-10-25T12:00:00Z', 'full', '{}', 3100000000)
            ON CONFLICT (app_id, order_id, part_key) DO UPDATE SET gross_amount = excluded.gross_amount
            """)
        #expect(try count() == 6)
    }

    @Test func theClosedMonthKeepsTheAmountsItHadAtTheClose() throws {
        let october = try figures("2026-10", .recorded)
        // Google: Q 3.00 and O 2.00 (priced before the close); P unknown; E's estimate. Apple: a1 and its
        // reversal net 0 at the estimate; a2's estimate.
        #expect(
            october.gross == [
                "google USD store": 5_000_000_000, "google USD configured": 5_000_000_000,
                "apple USD configured": 9_000_000_000,
            ], "\(october.gross)")
        #expect(october.unknown == 1 && october.restated == 0 && october.refunds == 6)

        // The event basis restates October with the amounts known now.
        let event = try figures("2026-10", .event)
        #expect(
            event.gross == [
                "google USD store": 9_990_000_000, "google EUR store": 4_500_000_000, "apple USD store": 9_990_000_000,
            ], "\(event.gross)")
        #expect(event.unknown == 0 && event.restated == 0)
    }

    @Test func theLaterMonthBooksTheChangesAndTheMonthsAddUp() throws {
        let november = try figures("2026-11", .recorded)
        // P in (4.99), E out (-5.00 USD estimate) and in (4.50 EUR). Apple, store: a1 +9.99 on the refund, -9.99
        // on its reversal; a2 +9.99, then its reversal at the amount of now, -9.99. Configured: a1 -9.00 and +9.00,
        // a2 -9.00.
        let expected: [String: Decimal] = [
            "google USD store": 4_990_000_000, "google USD configured": -5_000_000_000,
            "google EUR store": 4_500_000_000, "apple USD store": 0, "apple USD configured": -9_000_000_000,
        ]
        #expect(november.gross == expected, "\(november.gross)")
        #expect(november.restated == 4 && november.refunds == 0 && november.unknown == 0)

        // October and November recorded add up to October and November by event, per currency.
        let recorded = try figures("2026-10", .recorded).gross.merging(november.gross, uniquingKeysWith: +)
        let event = try figures("2026-10", .event).gross.merging(
            try figures("2026-11", .event).gross, uniquingKeysWith: +)
        func perCurrency(_ gross: [String: Decimal]) -> [String: Decimal] {
            var sums: [String: Decimal] = [:]
            for (key, amount) in gross {
                sums[key.split(separator: " ").prefix(2).joined(separator: " "), default: 0] += amount
            }
            return sums
        }
        #expect(perCurrency(recorded) == perCurrency(event), "\(recorded) vs \(event)")
    }

    @Test func theCSVCountsTheChangesBookedInEachRowWithTheRecordedBasisOnly() throws {
        let periods = try StorePeriods.resolve(month: CalendarMonth("2026-11"), on: ledger.connection)
        let recorded = try RefundReport.run(
            .storeMonth(periods, apps: ["droid"], basis: .recorded), on: ledger.connection
        ).csv()
        #expect(
            recorded.hasPrefix(
                "platform,currency,source,refunds,quantity,gross,tax,net,unknown_amount_refunds,"
                    + "family_revokes,reversed_refunds,not_revoked_refunds,restated_amounts\r\n"), "\(recorded)")
        #expect(recorded.contains("\r\ngoogle,EUR,store,0,0,4.50,0.00,4.50,0,0,0,0,1\r\n"), "\(recorded)")
        #expect(recorded.contains("\r\ngoogle,USD,configured,0,0,-5.00,,,0,0,0,0,0\r\n"), "\(recorded)")
        let event = try RefundReport.run(.storeMonth(periods, apps: ["droid"]), on: ledger.connection).csv()
        #expect(!event.contains("restated_amounts"))
        let report = try RefundReport.run(
            .storeMonth(periods, apps: ["droid"], basis: .recorded), on: ledger.connection)
        let line = "booked when stated (the old amount out, the new one in; restated_amounts): 2"
        #expect(report.table().contains(line) && report.html().contains(line))
    }

    /// A late October refund, recorded Nov 10 after the close and booked then, priced moments later (Nov 10) and
    /// again on Dec 10 after November closed too: November holds it at its first price, December the correction.
    @Test func aLateRefundIsBookedWithTheAmountOfItsOwnMonthsClose() throws {
        try ledger.google("GPA.L", "2026-10-15T12:00:00Z", gross: nil, recorded: "2026-11-10T00:00:00Z")
        try restate("GPA.L", at: "2026-11-10T00:00:05Z", "gross_amount = 6000000000, tax_amount = 0")
        try ledger.googleReport(month: CalendarMonth(year: 2026, month: 11), [])
        try ledger.connection.execute(
            "UPDATE payout_report SET closed_at = '2026-12-05T00:00:00Z' WHERE month = '2026-11' AND store = 'google'")
        try ledger.connection.execute("UPDATE refund SET gross_amount = 6500000000 WHERE order_id = 'GPA.L'")
        try ledger.connection.execute(
            """
            UPDATE refund_amount_change c SET changed_at = '2026-12-10T00:00:00Z' FROM refund r
            WHERE r.id = c.refund_id AND r.order_id = 'GPA.L' AND c.new_gross = 6500000000
            """)
        let periods = try StorePeriods.resolve(month: CalendarMonth("2026-11"), on: ledger.connection)
        var november: [String] = []
        try RefundReport.forEachDetail(
            .storeMonth(periods, detail: true, apps: ["droid"], basis: .recorded), on: ledger.connection
        ) { detail in
            guard detail.orderId == "GPA.L" else { return }
            november.append("\(detail.entry.rawValue) \(detail.grossNanos.map { "\($0)" } ?? "-")")
        }
        #expect(november == ["refund 6000000000"])
        let december = try RefundReport.run(
            RefundReportOptions(
                from: "2026-12-01", to: "2026-12-31", by: [.platform], timeZone: StorePeriods.timeZone,
                apps: ["droid"], basis: .recorded), on: ledger.connection)
        #expect(december.groups.count == 0, "without store periods amounts are the ledger's now")
        let decemberPeriods = StorePeriods(month: CalendarMonth(year: 2026, month: 12), apple: nil)
        let closedDecember = try RefundReport.run(
            .storeMonth(decemberPeriods, apps: ["droid"], basis: .recorded), on: ledger.connection)
        #expect(closedDecember.groups.map { $0.grossNanos } == [500_000_000])
        #expect(closedDecember.groups.map { $0.restated } == [1])
    }

    @Test func withoutStorePeriodsAmountsAreTheLedgersNow() throws {
        let recorded = try RefundReport.run(
            RefundReportOptions(
                from: "2026-10-01", to: "2026-11-30", by: [.platform], timeZone: StorePeriods.timeZone,
                apps: ["droid"], basis: .recorded), on: ledger.connection)
        // P 4.99 + Q 3.00 + O 2.00 in USD, E 4.50 in EUR: each at its amount of now, none restated.
        let gross = Dictionary(
            uniqueKeysWithValues: recorded.groups.map { group in
                (group.keys["currency"] ?? "", NSDecimalNumber(decimal: group.grossNanos ?? -1).int64Value)
            })
        #expect(gross == ["USD": 9_990_000_000, "EUR": 4_500_000_000])
        #expect(recorded.groups.map { $0.restated } == [0, 0] && recorded.groups.map { $0.unknownAmount } == [0, 0])
    }

    @Test func theDetailShowsEachChangeAsTwoEntriesWithoutUnits() throws {
        let periods = try StorePeriods.resolve(month: CalendarMonth("2026-11"), on: ledger.connection)
        var entries: [String] = []
        try RefundReport.forEachDetail(
            .storeMonth(periods, detail: true, apps: ["droid"], basis: .recorded), on: ledger.connection
        ) { detail in
            entries.append(
                "\(detail.orderId) \(detail.entry.rawValue) \(detail.quantity) \(detail.currency ?? "-") "
                    + "\(detail.grossNanos.map { "\($0)" } ?? "-") \(detail.day)")
        }
        #expect(
            entries.sorted() == [
                "GPA.E restated 0 EUR 4500000000 2026-11-11",
                "GPA.E restated 0 USD -5000000000 2026-11-11",
                "GPA.P restated 0 USD - 2026-11-11",
                "GPA.P restated 0 USD 4990000000 2026-11-11",
            ], "\(entries)")
    }
}
