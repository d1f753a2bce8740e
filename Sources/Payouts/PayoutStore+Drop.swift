import Foundation
import Postgres

extension PayoutStore {
    /// What ``drop(id:reason:)`` did.
    public enum DropOutcome: Sendable, Equatable {
        /// The report was dropped: it no longer counts in the tie-out.
        case dropped(app: String, sourceName: String)
        /// No report, loaded or dropped, has the id.
        case unknown
        /// The report was dropped before, at `at`, for `reason`: nothing changed.
        case alreadyDropped(at: Date, reason: String)
    }

    /// Drops report `id`, recording `reason` and the time: the report moves to `payout_report_drop`, file and all,
    /// and its rows go (the file holds every one of them), in one transaction. The tie-out reads only loaded
    /// reports, so a dropped one no longer counts.
    /// - Throws: `PostgresError`.
    public func drop(id: Int64, reason: String) throws -> DropOutcome {
        try connection.transaction { connection in
            guard let report = try Self.loadedReport(id: id, on: connection) else {
                return try Self.dropRecord(id: id, on: connection) ?? .unknown
            }
            // The same locks as a load of the same report or bytes, in the same order, so a drop never races one.
            try Self.lock(
                app: report.app, reportKey: report.reportKey, store: report.store, checksum: report.checksum,
                on: connection)
            guard try Self.loadedReport(id: id, on: connection) != nil else {
                return try Self.dropRecord(id: id, on: connection) ?? .unknown
            }
            try connection.execute(
                """
                INSERT INTO payout_report_drop (id, app_id, store, report_key, month, period_start, period_end,
                                                source_name, checksum, generation, row_count, loaded_at,
                                                replaced_count, file, reason)
                SELECT id, app_id, store, report_key, month, period_start, period_end, source_name, checksum,
                       generation, row_count, loaded_at, replaced_count, file, $2
                FROM payout_report WHERE id = $1
                """, [id, reason])
            // The rows have no foreign key (migration 0013): they go with their report here.
            try connection.execute("DELETE FROM payout_report_row WHERE report_id = $1", [id])
            try connection.execute("DELETE FROM payout_report WHERE id = $1", [id])
            return .dropped(app: report.app, sourceName: report.sourceName)
        }
    }

    private struct LoadedReport {
        var app: String
        var store: PayoutReport.Store
        var reportKey: String
        var checksum: String
        var sourceName: String
    }

    private static func loadedReport(id: Int64, on connection: PostgresConnection) throws -> LoadedReport? {
        guard
            let row = try connection.query(
                "SELECT app_id, store, report_key, checksum, source_name FROM payout_report WHERE id = $1", [id]
            ).first
        else { return nil }
        return LoadedReport(
            app: try row.decode("app_id"), store: PayoutReport.Store(rawValue: try row.decode("store")) ?? .google,
            reportKey: try row.decode("report_key"), checksum: try row.decode("checksum"),
            sourceName: try row.decode("source_name"))
    }

    private static func dropRecord(id: Int64, on connection: PostgresConnection) throws -> DropOutcome? {
        guard
            let row = try connection.query("SELECT dropped_at, reason FROM payout_report_drop WHERE id = $1", [id])
                .first
        else { return nil }
        return .alreadyDropped(at: try row.decode("dropped_at"), reason: try row.decode("reason"))
    }
}
