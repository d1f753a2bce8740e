import Foundation
import Postgres

/// Stores financial reports whole: the only writer of `payout_report` and `payout_report_row`.
public struct PayoutStore {
    /// What storing a report did.
    public enum Outcome: String, Sendable, Equatable {
        /// A report not seen before.
        case inserted
        /// The same bytes were stored already: nothing changed.
        case unchanged
        /// The store re-issued the report: the old one and its rows were replaced.
        case replaced
    }

    let connection: PostgresConnection

    /// Creates a store on `connection`.
    public init(connection: PostgresConnection) { self.connection = connection }

    /// Stores `report` for `app` in one transaction: rows and all, or nothing.
    /// - Throws: `PostgresError`.
    @discardableResult
    public func store(_ report: PayoutReport, app: String) throws -> Outcome {
        try store(PayoutStream(report), app: app).outcome
    }

    /// Stores a report for `app` while its rows are read, in one transaction: rows and all, or nothing (a bad row
    /// aborts the COPY and the transaction).
    /// - Returns: what was done, and the rows stored (0 when unchanged).
    /// - Throws: `PostgresError`; ``PayoutError`` for a bad row.
    @discardableResult
    public func store(_ stream: PayoutStream, app: String) throws -> (outcome: Outcome, rows: Int) {
        let report = stream.header
        return try connection.transaction { connection in
            // Two processes loading the same report wait for each other instead of failing on the unique key.
            try connection.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                ["storerecon.payout:\(app):\(report.store.rawValue):\(report.reportKey)"])
            let existing = try connection.query(
                "SELECT id, checksum FROM payout_report WHERE app_id = $1 AND store = $2 AND report_key = $3",
                [app, report.store.rawValue, report.reportKey])
            var replacedCount = 0
            if let row = existing.first {
                if try row.decode("checksum", as: String.self) == report.checksum { return (.unchanged, 0) }
                let oldId = try row.decode("id", as: Int64.self)
                // The rows have no foreign key (migration 0013): they go with their report here.
                try connection.execute("DELETE FROM payout_report_row WHERE report_id = $1", [oldId])
                let count = try connection.query(
                    "DELETE FROM payout_report WHERE id = $1 RETURNING replaced_count", [oldId])
                replacedCount = try count[0].decode("replaced_count", as: Int.self) + 1
            }
            let inserted = try connection.query(
                """
                INSERT INTO payout_report (app_id, store, report_key, month, period_start, period_end, source_name,
                                           checksum, generation, row_count, replaced_count, file)
                VALUES ($1, $2, $3, $4, $5::date, $6::date, $7, $8, $9, $10, $11, $12::bytea)
                RETURNING id
                """,
                [
                    app, report.store.rawValue, report.reportKey, report.month, report.periodStart, report.periodEnd,
                    report.sourceName, report.checksum, report.generation, 0, replacedCount,
                    report.file.map(Self.byteaHex),
                ])
            let id = try inserted[0].decode("id", as: Int64.self)
            let count = try copyRows(stream.rows, reportId: id, on: connection)
            try connection.execute("UPDATE payout_report SET row_count = $2 WHERE id = $1", [id, count])
            return (existing.isEmpty ? .inserted : .replaced, count)
        }
    }

    private func copyRows(
        _ rows: ((PayoutRow) throws -> Void) throws -> Void, reportId: Int64, on connection: PostgresConnection
    ) throws -> Int {
        try connection.copyIn(
            """
            COPY payout_report_row (report_id, line, kind, order_id, product_id, country, booked_at, refund_type,
                                    quantity, amount_currency, amount_nanos, merchant_currency, merchant_nanos)
            FROM STDIN
            """
        ) { writer in
            // Field by field, integers as digits: a row's values gathered into an array of strings first were a
            // sixth of the import's CPU.
            try rows { row in
                writer.field(reportId)
                writer.field(Int64(row.line))
                try writer.field(row.kind)
                try writer.field(row.orderId)
                try writer.field(row.productId)
                try writer.field(row.country)
                try writer.field(row.bookedAt.map(PostgresTimestamp.format))
                try writer.field(row.refundType)
                writer.field(row.quantity.map(Int64.init))
                try writer.field(row.amountCurrency)
                writer.field(row.amountNanos)
                try writer.field(row.merchantCurrency)
                writer.field(row.merchantNanos)
                try writer.endRow()
            }
        }
    }

    /// `data` as PostgreSQL's hex input for `bytea` (`\x0a1b...`).
    static func byteaHex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8](repeating: 0, count: 2 + data.count * 2)
        text[0] = 0x5C
        text[1] = 0x78
        data.withUnsafeBytes { bytes in
            for (index, byte) in bytes.enumerated() {
                text[2 + 2 * index] = digits[Int(byte >> 4)]
                text[3 + 2 * index] = digits[Int(byte & 0x0F)]
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
