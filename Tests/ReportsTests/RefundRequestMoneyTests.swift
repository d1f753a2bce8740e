import Foundation
import Postgres
import Reconciler
import Reports
import TestSupport
import Testing

/// The money of `report refund-requests` for both stores, with figures worked out by hand: the price stored with
/// each request is what a declined request kept; a refund the ledger has not recorded yet is the price (Apple: times
/// the revocation percentage); the ledger's refund wins when there is one; and the totals are the detail rows' sums.
@Suite("RefundRequestReport: money refunded and kept per currency")
struct RefundRequestMoneyTests {
    let from = Date(timeIntervalSince1970: 1_782_864_000)  // 2026-07-01T00:00:00Z
    let to = Date(timeIntervalSince1970: 1_782_864_000 + 86_400)

    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "requestmoney"))
        try Migrator(connection: connection).migrate()
        let setup = """
            INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.x'), ('droid', 'google', 'com.x');
            INSERT INTO refund_request (app_id, store, request_id, transaction_id, received_at, deadline, answer,
                                        decision, revocation_milli, price_nanos, currency)
            VALUES ('ios', 'apple', 'a1', 't1', '2026-07-01T01:00:00Z', '2026-07-01T13:00:00Z', 'answered', 'declined',
                    NULL, 9990000000, 'USD'),
                   ('ios', 'apple', 'a2', 't2', '2026-07-01T02:00:00Z', '2026-07-01T14:00:00Z', 'answered', 'refunded',
                    50000, 7980000000, 'USD'),
                   ('ios', 'apple', 'a3', 't3', '2026-07-01T03:00:00Z', '2026-07-01T15:00:00Z', 'no_facts', 'refunded',
                    NULL, 5990000000, 'USD'),
                   ('ios', 'apple', 'a4', 't4', '2026-07-01T04:00:00Z', '2026-07-01T16:00:00Z', 'answered', 'declined',
                    NULL, 1200000000000, 'JPY'),
                   ('droid', 'google', 'g1', 'GPA.1', '2026-07-01T05:00:00Z', '2026-07-02T05:00:00Z', 'answered',
                    'declined', NULL, 4990000000, 'EUR'),
                   ('droid', 'google', 'g2', 'GPA.2', '2026-07-01T06:00:00Z', '2026-07-02T06:00:00Z', 'answered',
                    'refunded', NULL, 2990000000, 'EUR'),
                   ('droid', 'google', 'g3', 'GPA.3', '2026-07-01T07:00:00Z', '2026-07-02T07:00:00Z', 'missed',
                    'declined', NULL, NULL, NULL),
                   ('droid', 'google', 'g4', 'GPA.4', '2026-07-01T08:00:00Z', '2026-07-02T08:00:00Z', 'answered',
                    'pending', NULL, 9990000000, 'EUR');
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, gross_amount, amount_precision,
                                amount_source, currency, payload)
            VALUES ('ios', 'apple', 't3', '2026-07-01T20:00:00Z', 'full', 4990, 3, 'store', 'USD', '{}');
            INSERT INTO google_order (app_id, order_id, status, currency, total_nanos)
            VALUES ('droid', 'GPA.3', 'ok', 'eur', 1000000000)
            """
        for statement in setup.components(separatedBy: ";\n") { try connection.execute(statement) }
        return connection
    }

    @Test func bothStoresMoneyIsRightPerCurrencyAndTheTotalsAreTheDetailRowsSums() throws {
        let connection = try database()
        defer { connection.close() }
        let report = try RefundRequestReport.gather(from: from, to: to, by: [.platform], on: connection)
        // USD: refunded a2 7.98 x 50 % = 3.99, a3 4.99 as the ledger has it (not its 5.99 price): 8.98; kept a1 9.99.
        // JPY: kept a4 1200. EUR: refunded g2 2.99; kept g1 4.99 + g3 1.00 (google_order) = 5.99; g4 is pending.
        #expect(
            report.money == [
                .init(currency: "EUR", refunded: "2.99", refundedUnknown: 0, kept: "5.99", keptUnknown: 0),
                .init(currency: "JPY", refunded: "0", refundedUnknown: 0, kept: "1200", keptUnknown: 0),
                .init(currency: "USD", refunded: "8.98", refundedUnknown: 0, kept: "9.99", keptUnknown: 0),
            ])
        let detail = try RefundRequestReport.detail(from: from, to: to, on: connection)
        let column = { (name: String) in RefundRequestReport.detailColumns.firstIndex(of: name)! }
        let cells = Dictionary(
            uniqueKeysWithValues: detail.map {
                ($0[column("request_id")], [$0[column("currency")], $0[column("refunded")], $0[column("kept")]])
            })
        #expect(cells["a2"] == ["USD", "3.99", ""] && cells["a3"] == ["USD", "4.99", ""])
        #expect(cells["g3"] == ["EUR", "", "1.00"] && cells["g4"] == ["", "", ""])
        var sums: [String: (refunded: Decimal, kept: Decimal)] = [:]
        for row in detail where !row[column("currency")].isEmpty {
            var sum = sums[row[column("currency")]] ?? (0, 0)
            sum.refunded += Decimal(string: row[column("refunded")]) ?? 0
            sum.kept += Decimal(string: row[column("kept")]) ?? 0
            sums[row[column("currency")]] = sum
        }
        #expect(sums.count == report.money.count)
        for line in report.money {
            let sum = try #require(sums[line.currency])
            #expect(sum.refunded == Decimal(string: line.refunded) && sum.kept == Decimal(string: line.kept))
        }
        // The counts: each total is the number of detail rows with that answer or decision.
        let totals = Dictionary(uniqueKeysWithValues: zip(RefundRequestReport.counts, report.totals))
        #expect(totals["requests"] == detail.count)
        for (name, key) in [("answered", "answer"), ("missed", "answer"), ("no_facts", "answer")] {
            #expect(totals[name] == detail.filter { $0[column(key)] == name }.count, "\(name)")
        }
        for name in ["refunded", "declined", "pending"] {
            #expect(totals[name] == detail.filter { $0[column("decision")] == name }.count, "\(name)")
        }
        #expect(totals["refunded"] == 3 && totals["declined"] == 4 && totals["pending"] == 1)
    }
}
