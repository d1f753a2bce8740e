import Foundation
import Postgres

/// Stores financial reports whole, once by content: the only writer of `payout_report`, `payout_report_row` and
/// `payout_report_drop`.
///
/// A report's bytes (its `checksum`) are stored once per app, whatever the file's name: a second load of the same
/// bytes stores nothing and names the report that holds them (bytes imported by hand and then met as the store's
/// object take the object's key). The same report key with other bytes is the store's re-issue, and replaces the old
/// version.
public struct PayoutStore {
    /// What storing a report did.
    public enum Outcome: String, Sendable, Equatable {
        /// A report not seen before.
        case inserted
        /// The same bytes were stored already under the same name: nothing changed.
        case unchanged
        /// The same bytes were stored already under another name: nothing stored.
        case duplicate
        /// The store re-issued the report: the old one and its rows were replaced.
        case replaced
        /// The same bytes were dropped by an operator, and the caller keeps them dropped: nothing stored.
        case keptDropped = "kept_dropped"
    }

    /// What to do with bytes an operator dropped before.
    public enum IfDropped: Sendable {
        /// Store them again (`import payouts`: the operator named the file).
        case storeAgain
        /// Leave them dropped (`sync payouts`: a nightly fetch must not undo an operator's drop).
        case keepDropped
    }

    /// What one call stored.
    public struct Stored: Sendable, Equatable {
        /// What was done.
        public var outcome: Outcome
        /// Rows stored (0 when nothing was).
        public var rows: Int
        /// The report that holds the bytes: the one stored now, the one that held them already, or (kept dropped)
        /// the dropped one.
        public var reportId: Int64
        /// The source name of the report that held the bytes already (`unchanged`, `duplicate`).
        public var heldBy: String?
        /// When these bytes had been dropped before and are stored again: the dropped report's id.
        public var droppedBefore: Int64?
    }

    let connection: PostgresConnection

    /// Creates a store on `connection`.
    public init(connection: PostgresConnection) { self.connection = connection }

    /// Stores `report` for `app` in one transaction: rows and all, or nothing.
    /// - Throws: `PostgresError`.
    @discardableResult
    public func store(_ report: PayoutReport, app: String, ifDropped: IfDropped = .storeAgain) throws -> Outcome {
        try store(PayoutStream(report), app: app, ifDropped: ifDropped).outcome
    }

    /// Stores a report for `app` while its rows are read, in one transaction: rows and all, or nothing (a bad row
    /// aborts the COPY and the transaction). Bytes already stored (by checksum) are not read again.
    /// - Returns: what was done, the rows stored and the report that holds the bytes.
    /// - Throws: `PostgresError`; ``PayoutError`` for a bad row.
    @discardableResult
    public func store(_ stream: PayoutStream, app: String, ifDropped: IfDropped = .storeAgain) throws -> Stored {
        let report = stream.header
        return try connection.transaction { connection in
            try Self.lock(
                app: app, reportKey: report.reportKey, store: report.store, checksum: report.checksum, on: connection)
            if let held = try connection.query(
                "SELECT id, report_key, source_name FROM payout_report WHERE app_id = $1 AND checksum = $2",
                [app, report.checksum]
            ).first {
                let same = try held.decode("report_key", as: String.self) == report.reportKey
                let id = try held.decode("id", as: Int64.self)
                let heldBy = try held.decode("source_name", as: String.self)
                if !same, report.generation != nil {
                    try adopt(report, heldAs: id, app: app, on: connection)
                } else if same, let generation = report.generation {
                    // The same bytes under the store's name (imported by hand, or rewritten unchanged): the stored
                    // report takes the object's generation, so the nightly sync knows it and does not fetch it again.
                    try connection.execute(
                        "UPDATE payout_report SET generation = $2 WHERE id = $1 AND generation IS DISTINCT FROM $2",
                        [id, generation])
                }
                return Stored(outcome: same ? .unchanged : .duplicate, rows: 0, reportId: id, heldBy: heldBy)
            }
            let dropped = try connection.query(
                "SELECT max(id) AS id FROM payout_report_drop WHERE app_id = $1 AND checksum = $2",
                [app, report.checksum]
            ).first?.decodeIfPresent("id", as: Int64.self)
            if let dropped, ifDropped == .keepDropped {
                return Stored(outcome: .keptDropped, rows: 0, reportId: dropped)
            }
            let replaced = try deleteVersion(of: report, app: app, on: connection)
            let inserted = try connection.query(
                """
                INSERT INTO payout_report (app_id, store, report_key, month, period_start, period_end, source_name,
                                           checksum, generation, row_count, replaced_count, file, closed_at)
                VALUES ($1, $2, $3, $4, $5::date, $6::date, $7, $8, $9, $10, $11, $12::bytea,
                        coalesce($13::timestamptz, now()))
                RETURNING id
                """,
                [
                    app, report.store.rawValue, report.reportKey, report.month, report.periodStart, report.periodEnd,
                    report.sourceName, report.checksum, report.generation, 0, replaced?.count ?? 0,
                    report.file.map(Self.byteaHex), replaced?.closedAt,
                ])
            let id = try inserted[0].decode("id", as: Int64.self)
            let count = try copyRows(stream.rows, reportId: id, on: connection)
            try connection.execute("UPDATE payout_report SET row_count = $2 WHERE id = $1", [id, count])
            return Stored(
                outcome: replaced == nil ? .inserted : .replaced, rows: count, reportId: id,
                droppedBefore: dropped)
        }
    }

    /// Takes the transaction's locks on a report key and on a file's bytes, key first: two processes loading the same
    /// report, or the same bytes under two names, wait for each other instead of failing on a unique key.
    static func lock(
        app: String, reportKey: String, store: PayoutReport.Store, checksum: String, on connection: PostgresConnection
    ) throws {
        try connection.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            ["storerecon.payout:\(app):\(store.rawValue):\(reportKey)"])
        try connection.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", ["storerecon.payout-content:\(app):\(checksum)"])
    }

    /// The store's own object (it has a generation) holds bytes stored already under another name (a file an operator
    /// imported by hand): the stored report takes the store's key, name and generation, so that the next re-issue of
    /// the object replaces it instead of being stored beside it (its month counted twice), and the nightly sync knows
    /// the object. An older version stored under the store's key is superseded by these bytes and goes.
    private func adopt(_ report: PayoutReport, heldAs id: Int64, app: String, on connection: PostgresConnection)
        throws
    {
        let superseded = try deleteVersion(of: report, app: app, on: connection)
        try connection.execute(
            """
            UPDATE payout_report SET report_key = $2, source_name = $3, generation = $4,
                                     closed_at = least(closed_at, $5::timestamptz)
            WHERE id = $1
            """, [id, report.reportKey, report.sourceName, report.generation, superseded?.closedAt])
    }

    /// Deletes the stored version of `report`'s key (other bytes: the store re-issued it), rows and all.
    /// - Returns: the new version's `replaced_count` and the month's first close, which the re-issue keeps (a month
    ///   closed stays closed from then: `--basis recorded`); `nil` when no version was stored.
    private func deleteVersion(of report: PayoutReport, app: String, on connection: PostgresConnection) throws -> (
        count: Int, closedAt: Date
    )? {
        guard
            let old = try connection.query(
                "SELECT id FROM payout_report WHERE app_id = $1 AND store = $2 AND report_key = $3",
                [app, report.store.rawValue, report.reportKey]
            ).first
        else { return nil }
        let oldId = try old.decode("id", as: Int64.self)
        // The rows have no foreign key (migration 0013): they go with their report here.
        try connection.execute("DELETE FROM payout_report_row WHERE report_id = $1", [oldId])
        let deleted = try connection.query(
            "DELETE FROM payout_report WHERE id = $1 RETURNING replaced_count, closed_at", [oldId])
        return (
            try deleted[0].decode("replaced_count", as: Int.self) + 1, try deleted[0].decode("closed_at", as: Date.self)
        )
    }

    private func copyRows(
        _ rows: ((PayoutRow) throws -> Void) throws -> Void, reportId: Int64, on connection: PostgresConnection
    ) throws -> Int {
        try connection.copyIn(
            """
            COPY payout_report_row (report_id, line, kind, order_id, product_id, country, booked_at, refund_type,
                                    quantity, amount_currency, amount_nanos, merchant_currency, merchant_nanos,
                                    package)
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
                try writer.field(row.package)
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
