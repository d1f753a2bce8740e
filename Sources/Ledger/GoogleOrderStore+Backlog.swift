import Foundation
import Postgres

/// The backlog of amounts: refunds still without the store's amount from earlier runs (never asked, pending at
/// Google, refused for want of permission, or set aside for refunding more than they charged).
///
/// A sync ends by asking for the whole backlog. Found by a scan of the app's every Google refund, that cost grew
/// with the ledger, every night, per app (bench/HISTORY.md has the figure). So each app keeps a mark
/// (`google_backlog_mark.asked_through`): every Google refund recorded before it has been asked for, or waits in
/// one of the kinds the backlog finds by index (pending, refused, set aside). A sync then looks only at the
/// refunds recorded since the mark and before its own start (the rows it stores itself it asks for as it goes),
/// and moves the mark to its start when it has asked for all of them.
extension GoogleOrderStore {
    /// Where a sync's backlog starts: the app's mark, and the database's time when the sync began.
    public struct BacklogMark: Sendable, Equatable {
        /// Every Google refund recorded before this was asked for; nil when unknown (the whole ledger is looked at).
        public let askedThrough: Date?
        /// The database's time when the sync began, before its first page.
        public let runStarted: Date
    }

    /// How far before a run's start the mark is set: a page another process began to store before then and
    /// committed after the run's backlog was read would otherwise never be looked at. Far longer than a page's
    /// transaction.
    public static let backlogMarkMargin: TimeInterval = 3600

    /// Reads the mark at the start of a sync. An app with no Google refund yet gets its mark now (with
    /// `initialize`, false in a dry run): nothing before this run can be waiting.
    public func openBacklog(initialize: Bool, on connection: PostgresConnection) throws -> BacklogMark {
        let row = try connection.query(
            """
            WITH fresh AS (
                INSERT INTO google_backlog_mark (app_id, asked_through)
                SELECT $1, clock_timestamp() - make_interval(secs => $2)
                WHERE $3 AND NOT EXISTS (SELECT 1 FROM refund WHERE app_id = $1 AND platform = 'google')
                ON CONFLICT (app_id) DO NOTHING
                RETURNING asked_through
            )
            SELECT clock_timestamp() AS started,
                   coalesce((SELECT asked_through FROM fresh),
                            (SELECT asked_through FROM google_backlog_mark WHERE app_id = $1)) AS mark
            """, [appId, Self.backlogMarkMargin, initialize])[0]
        return BacklogMark(askedThrough: try row.decodeIfPresent("mark"), runStarted: try row.decode("started"))
    }

    /// After a sync asked for its whole backlog (nothing stopped or dropped): every refund recorded before its
    /// start, less the margin, has been asked for. The mark only moves forward.
    public func closeBacklog(_ mark: BacklogMark, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO google_backlog_mark (app_id, asked_through)
            VALUES ($1, $2::timestamptz - make_interval(secs => $3))
            ON CONFLICT (app_id) DO UPDATE
            SET asked_through = greatest(google_backlog_mark.asked_through, EXCLUDED.asked_through)
            """, [appId, mark.runStarted, Self.backlogMarkMargin])
    }

    /// Order ids waiting for an amount from earlier runs (not fetched, or pending), oldest refund first.
    /// - Parameters:
    ///   - fetchedBefore: orders fetched since then (in the same run: still pending at Google) are left out.
    ///   - refusedToo: also the orders the Orders API refused for want of permission less than a day ago (a
    ///     backfill run after the permission was granted asks them at once; the nightly sync waits a day).
    ///   - mark: a sync's ``BacklogMark``; of the refunds never asked, only those recorded since its mark and
    ///     before the sync began are looked at. Without it (or with no mark yet) the whole ledger is.
    public func backlog(
        limit: Int, since: Date? = nil, fetchedBefore: Date? = nil, refusedToo: Bool = false,
        mark: BacklogMark? = nil, on connection: PostgresConnection
    ) throws -> [String] {
        let parameters: [any PostgresEncodable] = [
            appId, limit, since.map(PostgresTimestamp.format), fetchedBefore.map(PostgresTimestamp.format), refusedToo,
        ]
        guard let mark, let askedThrough = mark.askedThrough else {
            return try connection.query(Self.wholeBacklogSQL, parameters).map { try $0.decode("order_id") }
        }
        return try connection.query(
            Self.markedBacklogSQL, parameters + [askedThrough, mark.runStarted]
        ).map { try $0.decode("order_id") }
    }

    /// The refunds of the backlog, `r` joined to its order `o` ($1 app, $3 since, $4 fetched before, $5 refused too).
    private static let backlogFilter = """
        r.app_id = $1 AND r.platform = 'google' AND r.revoked
          AND ($3::timestamptz IS NULL OR r.refunded_at >= $3)
          AND (o.order_id IS NULL OR (o.status = 'ok' AND o.refund_pending)
               OR (o.status = 'ok' AND r.amount_source IS DISTINCT FROM 'store' AND o.fetched_at < r.recorded_at)
               OR (o.status = 'no_permission' AND ($5 OR o.fetched_at < now() - interval '1 day'))
               -- An order set aside for refunding more than it charged: asked again until Google corrects it.
               OR r.amount_note = 'over_refunded')
          AND ($4::timestamptz IS NULL OR o.order_id IS NULL OR o.fetched_at < $4)
        GROUP BY r.order_id
        ORDER BY min(r.refunded_at), r.order_id
        LIMIT $2
        """

    /// Every Google refund of the app, scanned.
    private static let wholeBacklogSQL = """
        SELECT r.order_id FROM refund r
        LEFT JOIN google_order o ON o.app_id = r.app_id AND o.order_id = r.order_id
        WHERE \(backlogFilter)
        """

    /// Only the orders that can be in the backlog given the mark ($6, to the run's start $7), each found by index:
    /// refunds recorded in between, orders pending or refused, orders set aside in the quarantine. Then their
    /// refunds and orders by key (OFFSET 0 keeps the planner from flattening the lookups into scans).
    private static let markedBacklogSQL = """
        WITH candidate AS (
            SELECT order_id AS id FROM refund
            WHERE recorded_at >= $6 AND recorded_at < $7 AND app_id = $1 AND platform = 'google'
            UNION
            SELECT order_id FROM google_order WHERE app_id = $1 AND refund_pending
            UNION
            SELECT order_id FROM google_order WHERE app_id = $1 AND status = 'no_permission'
            UNION
            SELECT natural_key FROM quarantine
            WHERE app_id = $1 AND job = 'google_orders' AND resolved_at IS NULL AND natural_key IS NOT NULL
        )
        SELECT r.order_id FROM candidate c
        CROSS JOIN LATERAL (
            SELECT * FROM refund WHERE app_id = $1 AND order_id = c.id AND platform = 'google' OFFSET 0
        ) r
        LEFT JOIN LATERAL (
            SELECT * FROM google_order WHERE app_id = $1 AND order_id = r.order_id OFFSET 0
        ) o ON true
        WHERE \(backlogFilter)
        """
}
