import Foundation
import Logging
import Postgres

/// A store row that a job could not store, on its way to the `quarantine` table.
///
/// A store's data never stops a job: repeats are merged, unknown values kept raw, and a row that cannot be stored
/// at all (a key field missing, a value of the wrong JSON type, an id longer than the ledger allows, a row the
/// database refuses, a signed payload that fails verification) is set aside here with its raw form and the reason,
/// while the rest of its page lands and the checkpoint moves on. `storerecon quarantine retry` re-applies it.
public struct QuarantinedRow: Sendable, Equatable {
    /// The job (and so the mapping) a row belongs to.
    public typealias Job = QuarantineJob

    /// The job.
    public var job: Job
    /// What the row says it is (an orderId, a transactionId, a notification UUID), where it says it.
    public var naturalKey: String?
    /// The row exactly as the store sent it.
    public var raw: String
    /// Why it could not be stored: the decode error with its field path, or the database's message.
    public var reason: String
    /// The database's SQLSTATE, when the database refused the row.
    public var sqlState: String?
    /// What a retry needs besides the row, e.g. the Apple environment that answered.
    public var context: [String: String]

    /// Creates an entry; `raw` bytes that are not UTF-8 are replaced, NUL bytes escaped (text cannot hold them).
    public init(
        job: Job, naturalKey: String?, raw: Data, reason: String, sqlState: String? = nil,
        context: [String: String] = [:]
    ) {
        self.init(
            job: job, naturalKey: naturalKey, raw: String(decoding: raw, as: UTF8.self), reason: reason,
            sqlState: sqlState, context: context)
    }

    /// Creates an entry from text.
    public init(
        job: Job, naturalKey: String?, raw: String, reason: String, sqlState: String? = nil,
        context: [String: String] = [:]
    ) {
        self.job = job
        self.naturalKey = naturalKey.map { Self.clip(Self.storable($0), to: 200) }
        var text = Self.storable(raw)
        if text.utf8.count > Self.maxRawBytes {
            text = String(decoding: text.utf8.prefix(Self.maxRawBytes), as: UTF8.self)
        }
        self.raw = text
        self.reason = Self.clip(Self.storable(reason), to: 2000)
        self.sqlState = sqlState
        self.context = context
    }

    /// A database refusal of this row.
    public init(job: Job, naturalKey: String?, raw: Data, refusal: PostgresError, context: [String: String] = [:]) {
        self.init(
            job: job, naturalKey: naturalKey, raw: raw,
            reason: "the database refused the row: \(refusal.message.trimmingCharacters(in: .whitespacesAndNewlines))",
            sqlState: refusal.sqlState, context: context)
    }

    /// The largest raw row kept (a bigger one is clipped; its reason still says what was wrong).
    public static let maxRawBytes = 1 << 20

    /// Text PostgreSQL can hold: a NUL byte written as the JSON escape `\u0000`.
    static func storable(_ text: String) -> String {
        text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "\\u0000") : text
    }

    static func clip(_ text: String, to count: Int) -> String {
        text.count <= count ? text : String(text.prefix(count - 3)) + "..."
    }
}

/// Counts what a ledger write did (`merged_repeats`, `quarantined`); a job's counters conform.
public protocol LedgerCounters: Sendable {
    /// Adds `amount` to the counter `name`.
    func add(_ name: String, _ amount: Int)
}

/// Reads and writes the `quarantine` table: the ledger is its one writer.
public enum Quarantine {
    /// Sets rows aside: one log line each (job, key, reason; never a secret: rows are store data), counted as
    /// `quarantined`. A row met again (an overlapping window, a rerun) updates the row already there.
    public static func record(
        _ rows: [QuarantinedRow], app: String, runId: Int64?, logger: Logger, counters: (any LedgerCounters)?,
        on connection: PostgresConnection
    ) throws {
        guard !rows.isEmpty else { return }
        for row in rows {
            logger.error(
                "quarantined \(row.job.rawValue) row \(row.naturalKey.map { $0.debugDescription } ?? "(no key)"): \(row.reason)"
            )
        }
        counters?.add("quarantined", rows.count)
        let contexts = try rows.map { row in
            String(decoding: try JSONEncoder.sorted.encode(row.context), as: UTF8.self)
        }
        try connection.execute(
            """
            INSERT INTO quarantine AS q (app_id, job, first_run, last_run, natural_key, raw, reason, sqlstate, context,
                                         seen_count)
            SELECT DISTINCT ON (job, md5(raw)) $1, job, $2::bigint, $2::bigint, natural_key, raw, reason, sqlstate,
                   context, count(*) OVER (PARTITION BY job, md5(raw))
            FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[])
                AS i(job, natural_key, raw, reason, sqlstate, context)
            ON CONFLICT (app_id, job, md5(raw)) DO UPDATE SET
                last_run = EXCLUDED.last_run, last_seen_at = now(), seen_count = q.seen_count + EXCLUDED.seen_count,
                reason = EXCLUDED.reason, sqlstate = EXCLUDED.sqlstate, context = EXCLUDED.context,
                -- A row that had landed and is refused again is open again; a dropped one stays dropped.
                resolved_at = CASE WHEN q.resolution = 'landed' THEN NULL ELSE q.resolved_at END,
                resolution = CASE WHEN q.resolution = 'landed' THEN NULL ELSE q.resolution END
            """,
            [
                app, runId, PostgresTextArray(rows.map(\.job.rawValue)),
                PostgresNullableTextArray(rows.map(\.naturalKey)), PostgresTextArray(rows.map(\.raw)),
                PostgresTextArray(rows.map(\.reason)), PostgresNullableTextArray(rows.map(\.sqlState)),
                PostgresTextArray(contexts),
            ])
    }

    /// Closes open quarantined rows whose key has now landed in the ledger through the normal path (a later,
    /// well-formed copy of the same row).
    public static func resolveLanded(
        job: QuarantinedRow.Job, app: String, keys: [String], note: String, on connection: PostgresConnection
    ) throws {
        guard !keys.isEmpty else { return }
        try connection.execute(
            """
            UPDATE quarantine SET resolved_at = now(), resolution = 'landed', resolution_note = $4
            WHERE app_id = $1 AND job = $2 AND resolved_at IS NULL AND natural_key = ANY ($3::text[])
            """, [app, job.rawValue, PostgresTextArray(keys), note])
    }

    /// The keys of the rows of a batch that landed (those the database did not refuse).
    public static func landedKeys<Row>(_ rows: [Row], refused: [(Row, PostgresError)], key: (Row) -> String) -> [String]
    {
        guard !refused.isEmpty else { return rows.map(key) }
        let refusedKeys = Set(refused.map { key($0.0) })
        return rows.map(key).filter { !refusedKeys.contains($0) }
    }

    /// Open (unacknowledged) quarantined rows per app and job.
    public static func openCounts(app: String?, on connection: PostgresConnection) throws -> [OpenCount] {
        try connection.query(
            """
            SELECT app_id, job, count(*) AS n, max(last_seen_at) AS last_seen FROM quarantine
            WHERE resolved_at IS NULL AND ($1::text IS NULL OR app_id = $1)
            GROUP BY app_id, job ORDER BY app_id, job
            """, [app]
        ).map { row in
            OpenCount(
                app: try row.decode("app_id"), job: try row.decode("job"), rows: try row.decode("n"),
                lastSeen: try row.decode("last_seen"))
        }
    }

    /// Open quarantined rows of one app and job.
    public struct OpenCount: Sendable, Equatable, Codable {
        /// The app.
        public var app: String
        /// The job.
        public var job: String
        /// Rows not yet acknowledged.
        public var rows: Int
        /// The last time a run met one of them.
        public var lastSeen: Date
    }

    /// Whether a database error refuses these rows (their data), rather than saying the database is away or the
    /// statement was stopped: only then are the rows of a page written one by one and the refused ones set aside.
    static func refusesRows(_ error: PostgresError) -> Bool {
        guard !error.isRetryable else { return false }
        return error.code == .server || error.code == .usage
    }

    /// SQLSTATE classes that are about a row's data: 21 cardinality, 22 data exception, 23 integrity constraint,
    /// 54 program limit (an index row too big). Any other refusal that hits every row of a page alike (a trigger a
    /// DBA added, a permission taken away) is about the database, not the data: the job stops instead of setting a
    /// whole page aside.
    static func isDataError(_ error: PostgresError) -> Bool {
        if error.code == .usage { return true }
        guard let state = error.sqlState else { return false }
        return ["21", "22", "23", "54"].contains(String(state.prefix(2)))
    }

    /// Writes a batch in one statement under a savepoint; when the database refuses it for the rows' sake, writes
    /// the rows one by one, each under a savepoint of its own, so exactly the rows it refuses are returned (to be
    /// quarantined) and the others land. Must run inside a transaction. Returns the summed counts of `write`.
    public static func writeRowByRowOnRefusal<Row>(
        _ rows: [Row], on connection: PostgresConnection, _ write: ([Row]) throws -> (Int, Int)
    ) throws -> (counts: (Int, Int), refused: [(Row, PostgresError)]) {
        guard !rows.isEmpty else { return ((0, 0), []) }
        try connection.execute("SAVEPOINT batch")
        do {
            let counts = try write(rows)
            try connection.execute("RELEASE SAVEPOINT batch")
            return (counts, [])
        } catch let error as PostgresError where refusesRows(error) {
            try connection.execute("ROLLBACK TO SAVEPOINT batch")
            if rows.count == 1 { return try settle(rows, counts: (0, 0), refused: [(rows[0], error)]) }
        }
        var counts = (0, 0)
        var refused: [(Row, PostgresError)] = []
        for row in rows {
            try connection.execute("SAVEPOINT row")
            do {
                let one = try write([row])
                counts.0 += one.0
                counts.1 += one.1
                try connection.execute("RELEASE SAVEPOINT row")
            } catch let error as PostgresError where refusesRows(error) {
                try connection.execute("ROLLBACK TO SAVEPOINT row")
                refused.append((row, error))
            }
        }
        return try settle(rows, counts: counts, refused: refused)
    }

    /// The rows refused, unless every row of the batch (a lone row too) was refused alike for a reason that is not
    /// about data: that is the database's fault, and the job stops with it rather than set the page aside.
    private static func settle<Row>(
        _ rows: [Row], counts: (Int, Int), refused: [(Row, PostgresError)]
    ) throws -> (counts: (Int, Int), refused: [(Row, PostgresError)]) {
        if refused.count == rows.count, let first = refused.first?.1, !isDataError(first),
            refused.allSatisfy({ $0.1.sqlState == first.sqlState })
        {
            throw first
        }
        return (counts, refused)
    }
}

extension Array {
    /// One element per key, the later one winning (in the place of the first): a store page may repeat a row
    /// (Google's listing is built from an event log and promises no unique rows), and one statement cannot upsert
    /// a key twice (SQLSTATE 21000). Returns the elements and how many repeats were merged.
    public func mergingRepeats<Key: Hashable>(by key: (Element) -> Key) -> (rows: [Element], merged: Int) {
        var position: [Key: Int] = [:]
        position.reserveCapacity(count)
        var kept: [Element] = []
        kept.reserveCapacity(count)
        for element in self {
            let key = key(element)
            if let index = position[key] {
                kept[index] = element
            } else {
                position[key] = kept.count
                kept.append(element)
            }
        }
        return (kept, count - kept.count)
    }
}

extension JSONEncoder {
    /// Sorted keys, slashes unescaped: stable text for `jsonb` columns and tests.
    public static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
