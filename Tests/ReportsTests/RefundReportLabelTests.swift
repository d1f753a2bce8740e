import Foundation
import Postgres
import Reports
import Testing

/// What every report says of its figures: Apple's amounts are the store-reported price (Apple asks that a report
/// built on its `price` say so); Google's coverage, on the detail table too; the sale's price of an Apple refund
/// whose refunded amount is unknown; cells wider than ASCII printed whole.
@Suite("RefundReport says what its figures are")
struct RefundReportLabelTests {
    static let options = RefundReportOptions(from: "2026-11-01", to: "2026-11-30")

    static func ledger(_ prefix: String) throws -> ReportLedger {
        let ledger = try ReportLedger(prefix: prefix)
        try ledger.insert([
            .init(order: "a1", refundedAt: "2026-11-02T10:00:00Z", gross: 4990, priceMilli: 4990),
            // A family revoke moves no money: its amount is unknown, the sale's price is not.
            .init(order: "a2", refundedAt: "2026-11-03T10:00:00Z", type: "family_revoke", gross: nil, priceMilli: 9990),
            .init(
                app: "droid", platform: "google", order: "GPA.1", refundedAt: "2026-11-04T10:00:00Z", gross: 1990),
        ])
        return ledger
    }

    @Test func everyFormatSaysApplesAmountsAreTheStoreReportedPrice() throws {
        let ledger = try Self.ledger("label")
        var detail = Self.options
        detail.detail = true
        for options in [Self.options, detail] {
            for format in [RefundReport.Format.table, .json, .html] {
                let text = try ledger.text(options, format)
                #expect(text.contains("store-reported price"), "\(format), detail \(options.detail)")
            }
        }
    }

    @Test func theDetailTableStatesGooglesCoverage() throws {
        let ledger = try Self.ledger("labelcover")
        var options = Self.options
        options.detail = true
        let table = try ledger.text(options, .table)
        #expect(table.split(separator: "\n").contains { $0 == RefundReport.googleCoverage }, "\(table)")
    }

    @Test func anAppleRefundWithoutAnAmountStillShowsItsSalePrice() throws {
        let ledger = try Self.ledger("labelprice")
        var options = Self.options
        options.detail = true
        let text = try ledger.text(options, .json)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let refunds = try #require(object["refunds"] as? [[String: Any]])
        let revoke = try #require(refunds.first { $0["order_id"] as? String == "a2" })
        #expect(revoke["price"] as? String == "9.99", "\(revoke)")
        #expect(revoke["gross"] is NSNull)
    }

    @Test func aCellBeyondASCIIIsPrintedWholeAndTheColumnsLineUp() throws {
        let ledger = try ReportLedger(prefix: "labelwide")
        try ledger.connection.execute(
            "INSERT INTO app (id, platform, store_app_id) VALUES ('acme-🍎', 'apple', 'com.acme')")
        try ledger.insert([
            .init(app: "acme-🍎", order: "a1", refundedAt: "2026-11-02T10:00:00Z", gross: 4990),
            .init(app: "ios", order: "a2", refundedAt: "2026-11-02T11:00:00Z", gross: 990),
        ])
        var options = Self.options
        options.by = [.app]
        let table = try ledger.text(options, .table).split(separator: "\n")
        let wide = try #require(table.first { $0.hasPrefix("acme-🍎") }, "\(table)")
        let narrow = try #require(table.first { $0.hasPrefix("ios") }, "\(table)")
        // The refund counts start in the same Character column.
        let column = { (line: Substring) in
            line.firstIndex(of: "1").map { line.distance(from: line.startIndex, to: $0) }
        }
        #expect(column(wide) != nil && column(wide) == column(narrow), "\(table)")
    }
}
