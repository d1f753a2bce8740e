import Foundation
import Postgres
import StoreCalendar

/// One financial report as `storerecon payouts list` shows it: loaded, or dropped with when and why.
public struct PayoutReportEntry: Sendable, Equatable, Encodable {
    /// The report's id (`payouts drop ID`); a dropped report keeps the id it had.
    public var id: Int64
    /// The app it belongs to.
    public var app: String
    /// The store that issued it.
    public var store: PayoutReport.Store
    /// `YYYY-MM`: Google's US-Pacific calendar month, Apple's fiscal month.
    public var month: CalendarMonth
    /// The report's own period's first day (`YYYY-MM-DD`).
    public var periodStart: String
    /// The period's last day, inclusive (`YYYY-MM-DD`).
    public var periodEnd: String
    /// The object name, request or file it came from.
    public var sourceName: String
    /// SHA-256 of the file's bytes, hex: what makes two files the same report.
    public var checksum: String
    /// Rows stored (a dropped report's rows went with the drop; its file holds them).
    public var rows: Int
    /// When it was loaded.
    public var loadedAt: Date
    /// When an operator dropped it (`nil`: it counts in the tie-out).
    public var droppedAt: Date?
    /// Why it was dropped.
    public var dropReason: String?

    enum CodingKeys: String, CodingKey {
        case id, app, store, month, periodStart = "period_start", periodEnd = "period_end", sourceName = "source_name"
        case checksum, rows, loadedAt = "loaded_at", dropped, droppedAt = "dropped_at", dropReason = "drop_reason"
    }

    /// Every field, `dropped` as a boolean and the drop's time and reason `null` for a loaded report.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(app, forKey: .app)
        try container.encode(store, forKey: .store)
        try container.encode(month, forKey: .month)
        try container.encode(periodStart, forKey: .periodStart)
        try container.encode(periodEnd, forKey: .periodEnd)
        try container.encode(sourceName, forKey: .sourceName)
        try container.encode(checksum, forKey: .checksum)
        try container.encode(rows, forKey: .rows)
        try container.encode(loadedAt, forKey: .loadedAt)
        try container.encode(droppedAt != nil, forKey: .dropped)
        try container.encode(droppedAt, forKey: .droppedAt)
        try container.encode(dropReason, forKey: .dropReason)
    }
}

extension PayoutStore {
    /// The reports loaded and dropped, of `app` or of every app, by app, store, month and id.
    /// - Throws: `PostgresError`.
    public func list(app: String?) throws -> [PayoutReportEntry] {
        try connection.query(
            """
            SELECT id, app_id, store, month, period_start::text AS period_start, period_end::text AS period_end,
                   source_name, checksum, row_count, loaded_at, NULL::timestamptz AS dropped_at, NULL::text AS reason
            FROM payout_report WHERE $1::text IS NULL OR app_id = $1
            UNION ALL
            SELECT id, app_id, store, month, period_start::text, period_end::text, source_name, checksum, row_count,
                   loaded_at, dropped_at, reason
            FROM payout_report_drop WHERE $1::text IS NULL OR app_id = $1
            ORDER BY app_id, store, month, id
            """, [app]
        ).map { row in
            PayoutReportEntry(
                id: try row.decode("id"), app: try row.decode("app_id"),
                store: PayoutReport.Store(rawValue: try row.decode("store")) ?? .google,
                month: try row.decode("month", as: CalendarMonth.self),
                periodStart: try row.decode("period_start"), periodEnd: try row.decode("period_end"),
                sourceName: try row.decode("source_name"), checksum: try row.decode("checksum"),
                rows: try row.decode("row_count"), loadedAt: try row.decode("loaded_at"),
                droppedAt: try row.decodeIfPresent("dropped_at"), dropReason: try row.decodeIfPresent("reason"))
        }
    }
}
