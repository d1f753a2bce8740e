import Foundation
import Postgres

/// One time slice of a Google voided window in flight (`sync_slice`): its bounds by recorded time and how far its own
/// token chain has come. A window is split into slices so that several pages can be asked for at once; each slice's
/// row is written in the transaction of the page it follows, so a crash resumes every slice from its last stored page.
public struct VoidedSlice: Sendable, Equatable {
    /// Its position in the window, from 0.
    public var number: Int
    /// Start of the slice (inclusive, as Google's `startTime`).
    public var start: Date
    /// End of the slice (inclusive, as Google's `endTime`); the next slice starts a millisecond later.
    public var end: Date
    /// The token of the slice's next page; nil before its first page and once drained.
    public var token: String?
    /// Pages stored.
    public var pagesDone: Int
    /// Rows stored.
    public var rowsDone: Int64
    /// Whether its last page is stored.
    public var drained: Bool

    /// A slice not yet asked for.
    public init(number: Int, start: Date, end: Date) {
        self.number = number
        self.start = start
        self.end = end
        token = nil
        pagesDone = 0
        rowsDone = 0
        drained = false
    }

    /// `[start, end]` cut into `count` slices of equal span on whole milliseconds (fewer when the window is shorter
    /// than `count` ms), each starting a millisecond after the previous one ends, the first at `start` and the last
    /// ending at `end`, so that every recorded time of the window is in exactly one slice.
    public static func split(start: Date, end: Date, count: Int) -> [VoidedSlice] {
        let low = Int64((start.timeIntervalSince1970 * 1000).rounded(.down))
        let high = Int64((end.timeIntervalSince1970 * 1000).rounded(.down))
        let parts = Int64(max(1, min(count, Int(clamping: max(1, high - low)))))
        guard parts > 1 else { return [VoidedSlice(number: 0, start: start, end: end)] }
        let span = high - low
        return (0..<parts).map { index in
            let from = index == 0 ? start : Self.date(millis: low + span * index / parts + 1)
            let to = index == parts - 1 ? end : Self.date(millis: low + span * (index + 1) / parts)
            return VoidedSlice(number: Int(index), start: from, end: to)
        }
    }

    /// Starts the slice no earlier than `oldest` (the oldest time Google keeps), ending no earlier than it either.
    /// - Returns: the part of the slice cut off, which can no longer be fetched; nil when none was.
    mutating func clamp(to oldest: Date) -> DateInterval? {
        guard start < oldest else { return nil }
        let lost = DateInterval(start: start, end: min(oldest, end))
        start = oldest
        end = max(end, oldest)
        return lost
    }

    static func date(millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// The slices of a job's window in flight, oldest first (empty when none is stored).
    public static func load(job: String, app: String, on connection: PostgresConnection) throws -> [VoidedSlice] {
        try connection.query(
            """
            SELECT slice_no, slice_start, slice_end, page_token, pages_done, rows_done, drained FROM sync_slice
            WHERE job = $1 AND app_id = $2 ORDER BY slice_no
            """, [job, app]
        ).map { row in
            var slice = VoidedSlice(
                number: try row.decode("slice_no"), start: try row.decode("slice_start"),
                end: try row.decode("slice_end"))
            slice.token = try row.decodeIfPresent("page_token")
            slice.pagesDone = try row.decode("pages_done")
            slice.rowsDone = try row.decode("rows_done")
            slice.drained = try row.decode("drained")
            return slice
        }
    }

    /// Replaces a job's slices (a new window, or none when `slices` is empty). Call it in the transaction that saves
    /// the window's checkpoint.
    public static func replace(
        _ slices: [VoidedSlice], job: String, app: String, on connection: PostgresConnection
    ) throws {
        try connection.execute("DELETE FROM sync_slice WHERE job = $1 AND app_id = $2", [job, app])
        for slice in slices { try slice.save(job: job, app: app, on: connection) }
    }

    /// Writes this slice's progress. Call it in the transaction that stores the page it follows.
    public func save(job: String, app: String, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO sync_slice (job, app_id, slice_no, slice_start, slice_end, page_token, pages_done, rows_done,
                                    drained, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())
            ON CONFLICT (job, app_id, slice_no) DO UPDATE SET
                slice_start = EXCLUDED.slice_start, slice_end = EXCLUDED.slice_end, page_token = EXCLUDED.page_token, pages_done = EXCLUDED.pages_done,
                rows_done = EXCLUDED.rows_done, drained = EXCLUDED.drained, updated_at = now()
            """, [job, app, number, start, end, token, pagesDone, rowsDone, drained])
    }
}
