import Foundation
import Postgres
import Reconciler
import Reports
import TestSupport

/// A throwaway database with the schema applied and ledger rows written as the report tests need them.
struct ReportLedger {
    /// One `refund` row; amounts are integers in `precision` digits, as the ledger stores them.
    struct Row {
        var app = "ios"
        var platform = "apple"
        var order: String
        var part = ""
        var product = "premium"
        var refundedAt: String
        /// When storerecon recorded it (`nil`: the column's default, now).
        var recordedAt: String? = nil
        var type = "full"
        var quantity = 1
        var gross: Int64?
        var tax: Int64? = nil
        var precision = 3
        var source: String? = "store"
        var currency: String? = "USD"
        var reversedAt: String? = nil
        var environment: String? = nil
        var priceMilli: Int64? = nil
        var country: String? = nil
        var note: String? = nil
    }

    let connection: PostgresConnection

    init(prefix: String) throws {
        connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: prefix))
        try Migrator(connection: connection).migrate()
        try connection.execute(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.x'), ('droid', 'google', 'com.x')
            """)
    }

    func insert(_ rows: [Row]) throws {
        for row in rows {
            let parameters: [any PostgresEncodable] = [
                row.app, row.platform, row.order, row.part, row.product, row.refundedAt, row.recordedAt, row.type,
                row.quantity, row.gross, row.tax, row.gross == nil ? nil : row.precision,
                row.gross == nil ? nil : row.source, row.currency, row.reversedAt, row.environment, row.priceMilli,
                row.country, row.note,
            ]
            try connection.execute(
                """
                INSERT INTO refund (app_id, platform, order_id, part_key, product_id, refunded_at, recorded_at,
                                    reason_label, refund_type, quantity, gross_amount, tax_amount, amount_precision,
                                    amount_source, currency, reversed_at, environment, price_milli, buyer_country,
                                    amount_note, payload)
                VALUES ($1, $2, $3, $4, $5, $6::timestamptz, coalesce($7::timestamptz, now()), 'other', $8, $9, $10,
                        $11, $12, $13, $14, $15::timestamptz, $16, $17, $18, $19, '{}')
                """, parameters)
        }
    }

    /// The report streamed or rendered into memory, as the command writes it.
    func text(_ options: RefundReportOptions, _ format: RefundReport.Format) throws -> String {
        let output = RefundReportOutput.memory()
        try RefundReport.write(options, format: format, on: connection, to: output)
        try output.finish()
        return output.text
    }

    /// The report's CSV as rows of fields (no field of these tests holds a comma).
    func csvRows(_ options: RefundReportOptions) throws -> [[String]] {
        try text(options, .csv).split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
    }
}
