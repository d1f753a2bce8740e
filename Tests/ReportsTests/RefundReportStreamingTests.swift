import Foundation
import Postgres
import Reports
import Testing

/// `--detail` is streamed through a cursor, a chunk at a time, in every format; JSON writes every key, `null` where
/// the value is unknown.
@Suite("RefundReport streams the detail")
struct RefundReportStreamingTests {
    /// More rows than two fetches (2000 each) hold, so the cursor loop crosses chunk boundaries.
    static let count = 4321

    static func ledger() throws -> ReportLedger {
        let ledger = try ReportLedger(prefix: "stream")
        // One refund a minute from 2026-11-01 00:00 UTC: order o1 ... o4321, 1.00 USD + n thousandths; every 100th
        // without amount (and no original id).
        try ledger.connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, original_id, product_id, refunded_at, reason_label,
                                refund_type, quantity, gross_amount, amount_precision, amount_source, currency,
                                payload)
            SELECT 'ios', 'apple', 'o' || n, CASE WHEN n % 100 <> 0 THEN 'orig' || n END, 'premium',
                   '2026-11-01T00:00:00Z'::timestamptz + (n - 1) * interval '1 minute', 'other', 'full', 1,
                   CASE WHEN n % 100 <> 0 THEN 1000 + n END, CASE WHEN n % 100 <> 0 THEN 3 END,
                   CASE WHEN n % 100 <> 0 THEN 'store' END, 'USD', '{}'
            FROM generate_series(1, $1::int) AS n
            """, [Self.count])
        return ledger
    }

    static let options = RefundReportOptions(from: "2026-11-01", to: "2026-11-30", detail: true)

    @Test func jsonHasEveryRowInOrderAndEveryKeyWithNullForTheUnknown() throws {
        let ledger = try Self.ledger()
        let text = try ledger.text(Self.options, .json)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let refunds = try #require(object["refunds"] as? [[String: Any]])
        #expect(refunds.count == Self.count)
        #expect(refunds.first?["order_id"] as? String == "o1")
        #expect(refunds.last?["order_id"] as? String == "o\(Self.count)")
        #expect(refunds.allSatisfy { Set($0.keys) == Set(RefundReport.detailColumns) })
        // o100: no amount, no original id: the keys are there, null.
        let unknown = try #require(refunds.first { $0["order_id"] as? String == "o100" })
        for key in ["gross", "tax", "net", "original_id", "source", "price", "reversed_at"] {
            #expect(unknown[key] is NSNull, "\(key)")
        }
        // o2001: 3.001 -> 3.00; Apple states no tax: tax and net null.
        let row = try #require(refunds.first { $0["order_id"] as? String == "o2001" })
        #expect(row["gross"] as? String == "3.00" && row["tax"] is NSNull && row["quantity"] as? Int == 1)
        #expect(object["unknownAmountRefunds"] as? Int == Self.count / 100)
        #expect(object["basis"] as? String == "event" && object["environment"] as? String == "production")
    }

    @Test func csvTableAndHTMLCarryEveryRow() throws {
        let ledger = try Self.ledger()
        let csv = try ledger.text(Self.options, .csv).split(separator: "\r\n")
        #expect(csv.count == Self.count + 1)
        #expect(csv.first == RefundReport.detailColumns.joined(separator: ",")[...])
        #expect(csv[1].hasPrefix("2026-11-01T00:00:00.000Z,2026-11-01,apple,ios,o1,,orig1,"))
        let table = try ledger.text(Self.options, .table).split(separator: "\n")
        // Title, header, the rows, the line on amounts unknown.
        #expect(table.count == Self.count + 3)
        let header = try #require(table.dropFirst().first)
        let gross = try #require(header.range(of: "gross")).lowerBound.utf16Offset(in: header)
        // Widths measured over every row (first pass), so the columns line up on the last row too.
        let last = try #require(table.dropLast().last)
        #expect(last.hasPrefix("2026-11-04T00:00:00.000Z"))
        #expect(Array(last)[gross - 1] == " " && Array(last)[gross].isNumber, "\(last)")
        let html = try ledger.text(Self.options, .html)
        #expect(html.components(separatedBy: "<tr><td>").count - 1 == Self.count)
        #expect(html.hasSuffix("</tbody></table></div>\n</body></html>\n"))
    }

    @Test func aFileOutputAppearsWholeOrNotAtAll() throws {
        let ledger = try Self.ledger()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("refunds.csv").path
        let output = try RefundReportOutput.file(atomicallyAt: path)
        try RefundReport.write(Self.options, format: .csv, on: ledger.connection, to: output)
        #expect(!FileManager.default.fileExists(atPath: path), "not in place before it is finished")
        try output.finish()
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.split(separator: "\r\n").count == Self.count + 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["refunds.csv"])
        let dropped = try RefundReportOutput.file(atomicallyAt: directory.appendingPathComponent("b.csv").path)
        try dropped.write("partial")
        dropped.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["refunds.csv"])
        let error = #expect(throws: ReportError.self) {
            try RefundReportOutput.file(atomicallyAt: "/nonexistent-\(UUID().uuidString)/r.csv")
        }
        #expect(error?.code == .failed)
        #expect(error?.message.contains("cannot write the report (no such file or directory)") == true)
    }
}
