import Foundation
import Postgres

/// A job's progress for one app (`sync_checkpoint`): the high-water mark of fully drained windows and, while a
/// window is in flight, that window and the token of its next page.
public struct SyncCheckpoint: Sendable, Equatable {
    /// The job name (`google_voided`, `google_voided_backfill`, `apple_notifications`, ...).
    public var job: String
    /// The app id.
    public var app: String
    /// End of the last fully drained window.
    public var highWater: Date?
    /// Start of the window in flight.
    public var windowStart: Date?
    /// End of the window in flight.
    public var windowEnd: Date?
    /// Continuation token of the next page of that window.
    public var pageToken: String?
    /// Pages stored in the window in flight.
    public var pagesDone: Int
    /// Rows stored in the window in flight.
    public var rowsDone: Int64
    /// The typical time of one store call as the last run measured it, milliseconds (nil until measured; only the
    /// Google voided jobs set it, to choose how many slices a window is paged in).
    public var callMillis: Int?
    /// The backfill request the window in flight was planned for (``GoogleVoidedSync/Mode/requestKey``), nil for
    /// the nightly sync's windows.
    public var windowRequest: String? = nil

    /// Whether a window is in flight.
    public var inFlight: Bool { windowStart != nil && windowEnd != nil }

    /// Reads the checkpoint, or an empty one.
    public static func load(job: String, app: String, on connection: PostgresConnection) throws -> SyncCheckpoint {
        let rows = try connection.query(
            """
            SELECT high_water, window_start, window_end, page_token, pages_done, rows_done, call_millis, window_request
            FROM sync_checkpoint WHERE job = $1 AND app_id = $2
            """, [job, app])
        guard let row = rows.first else {
            return SyncCheckpoint(
                job: job, app: app, highWater: nil, windowStart: nil, windowEnd: nil, pageToken: nil, pagesDone: 0,
                rowsDone: 0, callMillis: nil)
        }
        return SyncCheckpoint(
            job: job, app: app, highWater: try row.decodeIfPresent("high_water"),
            windowStart: try row.decodeIfPresent("window_start"), windowEnd: try row.decodeIfPresent("window_end"),
            pageToken: try row.decodeIfPresent("page_token"), pagesDone: try row.decode("pages_done"),
            rowsDone: try row.decode("rows_done"), callMillis: try row.decodeIfPresent("call_millis"),
            windowRequest: try row.decodeIfPresent("window_request"))
    }

    /// Writes the checkpoint. Call it inside the transaction that stores the page it follows.
    public func save(on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO sync_checkpoint (job, app_id, high_water, window_start, window_end, page_token, pages_done,
                                         rows_done, call_millis, window_request, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
            ON CONFLICT (job, app_id) DO UPDATE SET
                high_water = EXCLUDED.high_water, window_start = EXCLUDED.window_start,
                window_end = EXCLUDED.window_end, page_token = EXCLUDED.page_token,
                pages_done = EXCLUDED.pages_done, rows_done = EXCLUDED.rows_done,
                window_request = EXCLUDED.window_request,
                call_millis = COALESCE(EXCLUDED.call_millis, sync_checkpoint.call_millis), updated_at = now()
            """,
            [job, app, highWater, windowStart, windowEnd, pageToken, pagesDone, rowsDone, callMillis, windowRequest])
    }
}

/// A window that could no longer be fetched (older than the store keeps): recorded once, shown by `status`.
public enum SyncGap {
    /// Records a gap (idempotent for the same window). An open gap from the same start is the same loss grown (a
    /// store refusing every run while its history moves on): its end is moved, so `status` lists it once.
    public static func record(job: String, app: String, from: Date, to: Date, on connection: PostgresConnection)
        throws
    {
        try connection.execute(
            """
            WITH grown AS (
                UPDATE sync_gap SET gap_to = $4
                WHERE job = $1 AND app_id = $2 AND gap_from = $3 AND acknowledged_at IS NULL AND gap_to < $4
                  AND NOT EXISTS (SELECT 1 FROM sync_gap g
                                  WHERE g.job = $1 AND g.app_id = $2 AND g.gap_from = $3 AND g.gap_to = $4)
                RETURNING 1
            )
            INSERT INTO sync_gap (job, app_id, gap_from, gap_to)
            SELECT $1, $2, $3, $4
            WHERE NOT EXISTS (SELECT 1 FROM grown)
              AND NOT EXISTS (SELECT 1 FROM sync_gap
                              WHERE job = $1 AND app_id = $2 AND gap_from = $3 AND gap_to >= $4
                                AND acknowledged_at IS NULL)
            ON CONFLICT (job, app_id, gap_from, gap_to) DO NOTHING
            """, [job, app, from, to])
    }

    /// Marks an open gap as dealt with (`storerecon gaps acknowledge ID`), so `status` stops reporting it.
    /// - Returns: the gap's job and app, or nil when no open gap has that id.
    public static func acknowledge(id: Int64, on connection: PostgresConnection) throws -> (job: String, app: String)? {
        try connection.query(
            """
            UPDATE sync_gap SET acknowledged_at = now() WHERE id = $1 AND acknowledged_at IS NULL
            RETURNING job, app_id
            """, [id]
        ).first.map { (job: try $0.decode("job", as: String.self), app: try $0.decode("app_id", as: String.self)) }
    }
}
