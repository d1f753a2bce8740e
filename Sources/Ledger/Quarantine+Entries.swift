import Foundation
import Postgres

/// One quarantined row, as `quarantine list` shows it.
public struct QuarantineEntry: Codable, Sendable, Equatable {
    public var id: Int64
    public var app: String
    public var job: String
    public var naturalKey: String?
    public var reason: String
    public var sqlState: String?
    public var quarantinedAt: Date
    public var lastSeenAt: Date
    public var seenCount: Int
    public var resolution: String?
    public var resolutionNote: String?
    public var raw: String

    /// Creates an entry (the table's columns, for rendering and tests).
    public init(
        id: Int64, app: String, job: String, naturalKey: String?, reason: String, sqlState: String?,
        quarantinedAt: Date, lastSeenAt: Date, seenCount: Int, resolution: String?, resolutionNote: String?,
        raw: String
    ) {
        self.id = id
        self.app = app
        self.job = job
        self.naturalKey = naturalKey
        self.reason = reason
        self.sqlState = sqlState
        self.quarantinedAt = quarantinedAt
        self.lastSeenAt = lastSeenAt
        self.seenCount = seenCount
        self.resolution = resolution
        self.resolutionNote = resolutionNote
        self.raw = raw
    }
}

/// What the operator's commands read and change in the `quarantine` table.
extension Quarantine {
    /// Quarantined rows, open ones only unless `all`, of one app or all, or the one with `id`; without `withRaw`,
    /// each `raw` is empty (the stored payloads are not read).
    public static func entries(
        app: String?, all: Bool, id: Int64? = nil, withRaw: Bool = true, on connection: PostgresConnection
    ) throws -> [QuarantineEntry] {
        try connection.query(
            """
            SELECT id, app_id, job, natural_key, reason, sqlstate, quarantined_at, last_seen_at, seen_count,
                   resolution, resolution_note, CASE WHEN $4 THEN raw ELSE '' END AS raw
            FROM quarantine
            WHERE ($1::text IS NULL OR app_id = $1) AND ($2 OR resolved_at IS NULL) AND ($3::bigint IS NULL OR id = $3)
            ORDER BY id
            """, [app, all, id, withRaw]
        ).map { row in
            QuarantineEntry(
                id: try row.decode("id"), app: try row.decode("app_id"), job: try row.decode("job"),
                naturalKey: try row.decodeIfPresent("natural_key"), reason: try row.decode("reason"),
                sqlState: try row.decodeIfPresent("sqlstate"), quarantinedAt: try row.decode("quarantined_at"),
                lastSeenAt: try row.decode("last_seen_at"), seenCount: try row.decode("seen_count"),
                resolution: try row.decodeIfPresent("resolution"),
                resolutionNote: try row.decodeIfPresent("resolution_note"), raw: try row.decode("raw"))
        }
    }

    /// Abandons open rows (the one with `id`, or all), of `app` when given, recording why. Returns how many.
    public static func drop(id: Int64?, app: String?, reason: String, on connection: PostgresConnection) throws -> Int {
        try connection.query(
            """
            UPDATE quarantine SET resolved_at = now(), resolution = 'dropped', resolution_note = $3
            WHERE resolved_at IS NULL AND ($1::bigint IS NULL OR id = $1) AND ($2::text IS NULL OR app_id = $2)
            RETURNING id
            """, [id, app, reason]
        ).count
    }

    /// Marks an open row landed by a retry.
    public static func markLanded(id: Int64, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE quarantine SET resolved_at = now(), resolution = 'landed',
                resolution_note = coalesce(resolution_note, 'retried')
            WHERE id = $1 AND resolved_at IS NULL
            """, [id])
    }

    /// What a retry of the row needs besides the row (e.g. the Apple environment that answered).
    public static func context(id: Int64, on connection: PostgresConnection) throws -> [String: String] {
        let text: String = try connection.query("SELECT context::text AS c FROM quarantine WHERE id = $1", [id])[0]
            .decode("c")
        return (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }

    /// Whether the row has landed.
    public static func isLanded(id: Int64, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT resolution = 'landed' AS landed FROM quarantine WHERE id = $1", [id]).first
            .map { try $0.decodeIfPresent("landed", as: Bool.self) ?? false } ?? false
    }

    /// Records why a retried row still cannot be stored; the row keeps its id.
    public static func updateReason(id: Int64, _ reason: String, on connection: PostgresConnection) throws {
        try connection.execute(
            "UPDATE quarantine SET reason = $2, last_seen_at = now() WHERE id = $1",
            [id, QuarantinedRow.clip(QuarantinedRow.storable(reason), to: 2000)])
    }
}

extension Quarantine {
    /// Whether the quarantine already holds every one of `rows` under the same job and key (set aside by an earlier
    /// run, open or resolved; for `heldFor` seconds at least when given, by the database's clock): a payload that
    /// failed twice is not one spoiled on its way, and reading its page again will not mend it. False when `rows` is
    /// empty or one has no key.
    public static func heldBefore(
        _ rows: [QuarantinedRow], app: String, heldFor: Double? = nil, on connection: PostgresConnection
    ) throws -> Bool {
        let keyed = rows.compactMap { row in row.naturalKey.map { (job: row.job.rawValue, key: $0) } }
        guard !rows.isEmpty, keyed.count == rows.count else { return false }
        let held: Int = try connection.query(
            """
            SELECT count(DISTINCT (job, natural_key))::int AS n FROM quarantine
            WHERE app_id = $1 AND (job, natural_key) IN (SELECT * FROM unnest($2::text[], $3::text[]))
              AND ($4::float8 IS NULL OR quarantined_at <= now() - make_interval(secs => $4::float8))
            """,
            [app, PostgresTextArray(keyed.map(\.job)), PostgresTextArray(keyed.map(\.key)), heldFor]
        )[0].decode("n")
        return held == Set(keyed.map { "\($0.job) \($0.key)" }).count
    }
}
