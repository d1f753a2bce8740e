import Foundation
import Postgres

/// `backfill apple-refunds`: the customers it queues and its progress (`apple_refund_backfill`).
extension AppleRefundCursorStore {
    /// Queues the customers of `ids` (their heads) for a backfill, and records the backfill.
    func queueBackfill(ids: [String], on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.transaction { connection in
            try connection.execute(
                """
                INSERT INTO apple_refund_cursor (app_id, original_transaction_id)
                SELECT DISTINCT $1, id FROM unnest($2::text[]) AS i(id)
                ON CONFLICT DO NOTHING
                """, [appId, PostgresTextArray(ids)])
            let queued: Int = try connection.query(
                """
                WITH heads AS (
                    SELECT DISTINCT coalesce(c.customer, c.original_transaction_id) AS head FROM apple_refund_cursor c
                    WHERE c.app_id = $1 AND c.original_transaction_id = ANY ($2::text[])
                ), queued AS (
                    UPDATE apple_refund_cursor c SET queued_at = now(), queue_reason = 'backfill'
                    FROM heads h WHERE c.app_id = $1 AND c.original_transaction_id = h.head AND c.queued_at IS NULL
                    RETURNING 1
                )
                SELECT count(*) AS n FROM queued
                """, [appId, PostgresTextArray(ids)])[0].decode("n")
            try recordBackfill(queued: queued, on: connection)
        }
    }

    /// Queues every customer (head) not read (``unread(recheck:)``) for a backfill, and records the backfill. A
    /// pending backfill is resumed, not started again.
    func queueBackfillAll(recheckSeconds: Double, on connection: PostgresConnection) throws {
        try connection.transaction { connection in
            let queued: Int = try connection.query(
                """
                WITH queued AS (
                    UPDATE apple_refund_cursor SET queued_at = now(), queue_reason = 'backfill'
                    WHERE app_id = $1 AND customer IS NULL AND queued_at IS NULL AND \(Self.unread(recheck: "$2"))
                    RETURNING 1
                )
                SELECT count(*) AS n FROM queued
                """, [appId, recheckSeconds])[0].decode("n")
            try recordBackfill(queued: queued, on: connection)
        }
    }

    private func recordBackfill(queued: Int, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO apple_refund_backfill AS b (app_id, started_at, queued) VALUES ($1, now(), $2)
            ON CONFLICT (app_id) DO UPDATE SET
                started_at = CASE WHEN b.finished_at IS NULL AND b.canceled_at IS NULL THEN b.started_at ELSE now() END,
                queued = CASE WHEN b.finished_at IS NULL AND b.canceled_at IS NULL THEN b.queued + $2 ELSE $2 END,
                dropped = CASE WHEN b.finished_at IS NULL AND b.canceled_at IS NULL THEN b.dropped ELSE 0 END,
                finished_at = NULL, canceled_at = NULL
            """, [appId, queued])
    }

    /// Marks the app's backfill finished once none of its customers is left queued.
    func closeBackfillIfDrained(on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE apple_refund_backfill SET finished_at = now()
            WHERE app_id = $1 AND finished_at IS NULL AND canceled_at IS NULL AND NOT EXISTS (
                SELECT 1 FROM apple_refund_cursor
                WHERE app_id = $1 AND queued_at IS NOT NULL AND queue_reason = 'backfill')
            """, [appId])
    }
}

/// Where an app's `backfill apple-refunds` stands (`storerecon backfill apple-refunds --status`).
public struct AppleBackfillProgress: Sendable, Equatable {
    /// When the backfill started.
    public var startedAt: Date
    /// Customers it queued.
    public var queued: Int
    /// Customers still queued for it.
    public var left: Int
    /// Customers `--cancel` took out of its queue.
    public var dropped: Int
    /// When its last customer was read; nil while pending.
    public var finishedAt: Date?
    /// When `--cancel` dropped it; nil otherwise.
    public var canceledAt: Date?

    /// Customers read (or merged into others read).
    public var done: Int { max(0, queued - left - dropped) }

    /// The app's backfill, nil when none was ever started.
    public static func load(app: String, on connection: PostgresConnection) throws -> AppleBackfillProgress? {
        let rows = try connection.query(
            """
            SELECT b.started_at, b.queued, b.dropped, b.finished_at, b.canceled_at,
                   (SELECT count(*) FROM apple_refund_cursor c
                    WHERE c.app_id = b.app_id AND c.queued_at IS NOT NULL AND c.queue_reason = 'backfill') AS left_
            FROM apple_refund_backfill b WHERE b.app_id = $1
            """, [app])
        guard let row = rows.first else { return nil }
        return AppleBackfillProgress(
            startedAt: try row.decode("started_at"), queued: try row.decode("queued"), left: try row.decode("left_"),
            dropped: try row.decode("dropped"),
            finishedAt: try row.decodeIfPresent("finished_at"), canceledAt: try row.decodeIfPresent("canceled_at"))
    }

    /// Drops the app's pending backfill: its queued customers leave the queue (refunds, revisions and everything
    /// else stored stay). Customers a notification queued are kept.
    /// - Returns: the customers dropped from the queue.
    @discardableResult
    public static func cancel(app: String, on connection: PostgresConnection) throws -> Int {
        try connection.transaction { connection in
            let dropped: Int = try connection.query(
                """
                WITH dropped AS (
                    UPDATE apple_refund_cursor SET queued_at = NULL, queue_reason = NULL
                    WHERE app_id = $1 AND queued_at IS NOT NULL AND queue_reason = 'backfill'
                    RETURNING 1
                )
                SELECT count(*) AS n FROM dropped
                """, [app])[0].decode("n")
            try connection.execute(
                """
                UPDATE apple_refund_backfill SET canceled_at = now(), dropped = dropped + $2
                WHERE app_id = $1 AND finished_at IS NULL AND canceled_at IS NULL
                """, [app, dropped])
            return dropped
        }
    }
}
