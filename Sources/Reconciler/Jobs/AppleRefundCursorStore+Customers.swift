import Foundation
import Postgres

/// Customers: Get Refund History answers for the customer, whichever of their transactions it is asked with, so the
/// original transaction ids of one customer are grouped and one chain of refund history serves them all. Ids are one
/// customer when their refund histories return each other's transactions, or when they share an `appTransactionId`
/// (signed transactions since 2025) or an imported `user_ref`. A group is stood for by its head (the cursor row with
/// `customer` NULL); the others name the head in `customer`. Only heads are queued, claimed and swept.
extension AppleRefundCursorStore {
    /// Which customers a claim takes.
    /// A cursor row not read: never, not within `sync.appleRecheckAfter` (the statement's parameter `parameter`, in
    /// seconds), or its last read failed. What the sweep reads and `backfill apple-refunds --all` queues.
    static func unread(recheck parameter: String) -> String {
        "(last_checked_at IS NULL OR read_failed_at IS NOT NULL "
            + "OR last_checked_at < now() - make_interval(secs => \(parameter)::double precision))"
    }

    enum ClaimKind: Sendable {
        /// Queued by a notification (or anything but a backfill).
        case notified
        /// Queued by `backfill apple-refunds`.
        case backfill
        /// Queued for any reason (the backfill command drains them all).
        case queued
        /// Not queued, and not read within `sync.appleRecheckAfter` or its last read failed (the sweep).
        case sweep

        /// The parameters `condition` uses (after the statement's own): the sweep's `sync.appleRecheckAfter`.
        func parameters(_ recheckSeconds: Double) -> [any PostgresEncodable] {
            self == .sweep ? [recheckSeconds] : []
        }

        /// The claim's condition on a cursor row (no user input: fixed SQL; `parameter` names the statement's
        /// parameter for `sync.appleRecheckAfter` in seconds, used by the sweep only).
        func condition(recheck parameter: String) -> String {
            switch self {
            case .notified: "queued_at IS NOT NULL AND queue_reason IS DISTINCT FROM 'backfill'"
            case .backfill: "queued_at IS NOT NULL AND queue_reason = 'backfill'"
            case .queued: "queued_at IS NOT NULL"
            case .sweep: "queued_at IS NULL AND \(AppleRefundCursorStore.unread(recheck: parameter))"
            }
        }
    }

    /// Before a run reads anyone: known subscriptions without a cursor row get one (never checked sorts first in the
    /// sweep), and ids sharing an imported `user_ref` or an `appTransactionId` are grouped into one customer.
    /// - Returns: the customers merged into others.
    func prepareCustomers(on connection: PostgresConnection) throws -> Int {
        try connection.transaction { connection in
            try lockCustomers(on: connection)
            return try addKnownAndGroup(on: connection)
        }
    }

    /// Serializes changes to the app's grouping (a sync and a backfill may regroup at once, readers merge as they
    /// read) until the caller's transaction ends; taken before any cursor row is changed, so no two regroupings can
    /// wait on each other's rows.
    func lockCustomers(on connection: PostgresConnection) throws {
        _ = try connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended('storerecon.apple_customers:' || $1, 0)) IS NULL AS x",
            [appId])
    }

    private func addKnownAndGroup(on connection: PostgresConnection) throws -> Int {
        try connection.execute(
            """
            INSERT INTO apple_refund_cursor (app_id, original_transaction_id)
            SELECT s.app_id, s.store_id FROM subscription s
            WHERE s.app_id = $1 AND NOT EXISTS (
                SELECT 1 FROM apple_refund_cursor c WHERE c.app_id = s.app_id AND c.original_transaction_id = s.store_id)
            ON CONFLICT DO NOTHING
            """, [appId])
        // A member queued directly (`quarantine retry` queues the id it retried) hands its place to its head.
        try connection.execute(
            """
            WITH queued AS (
                SELECT customer AS head, min(queued_at) AS queued_at,
                       coalesce(min(queue_reason) FILTER (WHERE queue_reason <> 'backfill'), min(queue_reason))
                           AS reason
                FROM apple_refund_cursor
                WHERE app_id = $1 AND queued_at IS NOT NULL AND customer IS NOT NULL
                GROUP BY customer
            ), heads AS (
                UPDATE apple_refund_cursor c SET queued_at = least(c.queued_at, q.queued_at),
                    queue_reason = CASE
                        WHEN c.queue_reason IS NULL OR (c.queue_reason = 'backfill' AND q.reason <> 'backfill')
                            THEN q.reason
                        ELSE c.queue_reason END
                FROM queued q WHERE c.app_id = $1 AND c.original_transaction_id = q.head
                RETURNING 1
            )
            UPDATE apple_refund_cursor SET queued_at = NULL, queue_reason = NULL
            WHERE app_id = $1 AND queued_at IS NOT NULL AND customer IS NOT NULL
            """, [appId])
        return try group(by: .userRef, on: connection) + group(by: .appTransactionId, on: connection)
    }

    /// What ids of one customer share.
    enum GroupKey {
        case userRef
        case appTransactionId(only: [String]?)

        static let appTransactionId = GroupKey.appTransactionId(only: nil)
    }

    /// Groups the ids sharing `key` into one customer each, until no two heads share one (each pass merges what it
    /// can without making chains). The head kept is one already read (it has a revision), else the smallest id.
    /// - Returns: the heads merged into others.
    @discardableResult
    func group(by key: GroupKey, on connection: PostgresConnection) throws -> Int {
        let keyed: String
        var parameters: [any PostgresEncodable] = [appId]
        switch key {
        case .userRef:
            keyed = """
                SELECT DISTINCT s.user_ref AS k, coalesce(c.customer, c.original_transaction_id) AS head
                FROM apple_refund_cursor c
                JOIN subscription s ON s.app_id = c.app_id AND s.store_id = c.original_transaction_id
                WHERE c.app_id = $1 AND s.user_ref IS NOT NULL AND s.user_ref <> ''
                """
        case .appTransactionId(let only):
            keyed = """
                SELECT DISTINCT c.app_transaction_id AS k, coalesce(c.customer, c.original_transaction_id) AS head
                FROM apple_refund_cursor c
                WHERE c.app_id = $1 AND c.app_transaction_id IS NOT NULL
                  AND ($2::text[] IS NULL OR c.app_transaction_id = ANY ($2::text[]))
                """
            parameters.append(only.map(PostgresTextArray.init))
        }
        let moves = """
            keyed AS (\(keyed)
            ), multi AS (
                SELECT k FROM keyed GROUP BY k HAVING count(*) > 1
            ), choice AS (
                SELECT DISTINCT ON (keyed.k) keyed.k, keyed.head AS keep
                FROM keyed JOIN multi USING (k)
                JOIN apple_refund_cursor h ON h.app_id = $1 AND h.original_transaction_id = keyed.head
                ORDER BY keyed.k, h.revision IS NULL, keyed.head
            ), pairs AS (
                SELECT DISTINCT ON (keyed.head) keyed.head AS old, choice.keep AS new
                FROM keyed JOIN choice USING (k) WHERE keyed.head <> choice.keep
                ORDER BY keyed.head, choice.keep
            ), moves AS (
                SELECT old, new FROM pairs WHERE new NOT IN (SELECT old FROM pairs)
            )
            """
        var total = 0
        for _ in 0..<32 {
            let moved = try applyMoves(moves, parameters, on: connection)
            total += moved
            if moved == 0 { break }
        }
        return total
    }

    /// Merges the customers of `ids` (a refund-history page's transactions name them) into `customer`'s: its chain
    /// of refund history has just returned their refunds. Ids not known yet join as members.
    func mergeCustomers(_ ids: [String], into customer: String, on connection: PostgresConnection) throws {
        let others = Array(Set(ids).subtracting([customer]))
        guard !others.isEmpty else { return }
        try lockCustomers(on: connection)
        try connection.execute(
            """
            INSERT INTO apple_refund_cursor (app_id, original_transaction_id, customer)
            SELECT $1, i.id, coalesce(h.customer, h.original_transaction_id)
            FROM unnest($3::text[]) AS i(id)
            JOIN apple_refund_cursor h ON h.app_id = $1 AND h.original_transaction_id = $2
            ON CONFLICT DO NOTHING
            """, [appId, customer, PostgresTextArray(others)])
        try applyMoves(
            """
            target AS (
                SELECT coalesce(customer, original_transaction_id) AS head FROM apple_refund_cursor
                WHERE app_id = $1 AND original_transaction_id = $2
            ), moves AS (
                SELECT DISTINCT coalesce(c.customer, c.original_transaction_id) AS old, t.head AS new
                FROM apple_refund_cursor c CROSS JOIN target t
                WHERE c.app_id = $1 AND c.original_transaction_id = ANY ($3::text[])
                  AND coalesce(c.customer, c.original_transaction_id) <> t.head
            )
            """, [appId, customer, PostgresTextArray(others)], on: connection)
    }

    /// Moves every row of each `old` head (the head and its members) under `new`; the new head takes over the old
    /// one's queue entry (the earliest, a notification's reason before a backfill's), notification date and
    /// `appTransactionId`. `moves` is SQL defining the CTE `moves(old, new)` (and any CTEs before it); no `new` is
    /// an `old`.
    /// - Returns: the rows moved.
    @discardableResult
    func applyMoves(_ moves: String, _ parameters: [any PostgresEncodable], on connection: PostgresConnection)
        throws -> Int
    {
        let rows = try connection.query(
            """
            WITH \(moves), transfer AS (
                SELECT m.new, min(o.queued_at) AS queued_at, max(o.notified_at) AS notified_at,
                       coalesce(min(o.queue_reason) FILTER (WHERE o.queue_reason <> 'backfill'), min(o.queue_reason))
                           AS reason,
                       min(o.app_transaction_id) AS app_transaction_id
                FROM moves m JOIN apple_refund_cursor o ON o.app_id = $1 AND o.original_transaction_id = m.old
                GROUP BY m.new
            ), heads AS (
                UPDATE apple_refund_cursor c SET
                    queued_at = least(c.queued_at, t.queued_at),
                    queue_reason = CASE
                        WHEN t.reason IS NULL THEN c.queue_reason
                        WHEN c.queue_reason IS NULL OR (c.queue_reason = 'backfill' AND t.reason <> 'backfill')
                            THEN t.reason
                        ELSE c.queue_reason END,
                    notified_at = greatest(c.notified_at, t.notified_at),
                    app_transaction_id = coalesce(c.app_transaction_id, t.app_transaction_id)
                FROM transfer t WHERE c.app_id = $1 AND c.original_transaction_id = t.new
                RETURNING 1
            ), moved AS (
                UPDATE apple_refund_cursor c SET customer = m.new, queued_at = NULL, queue_reason = NULL,
                       revision = NULL
                FROM moves m WHERE c.app_id = $1 AND (c.original_transaction_id = m.old OR c.customer = m.old)
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM moved) AS n
            """, parameters)
        return try rows[0].decode("n")
    }

    /// One customer a notification named: its original transaction id, the notification's date, and the
    /// `appTransactionId` of its signed transaction when it has one.
    struct Notified {
        var originalTransactionId: String
        var signedAt: Date
        var appTransactionId: String?
    }

    /// Queues the customers notifications named (their heads), inside the caller's transaction. A customer already
    /// queued by a notification no older than this one is not queued again: Notification History windows overlap,
    /// and a notification seen again must not cost another read. A new notification always queues its customer,
    /// however recently read; one naming a customer queued by a backfill moves it ahead of the backfill.
    func queueNotified(_ named: [Notified], reason: String, on connection: PostgresConnection) throws {
        guard !named.isEmpty else { return }
        try lockCustomers(on: connection)
        let ids = named.map(\.originalTransactionId)
        try connection.execute(
            """
            INSERT INTO apple_refund_cursor AS c (app_id, original_transaction_id, app_transaction_id)
            SELECT DISTINCT ON (id) $1, id, atid FROM unnest($2::text[], $3::text[]) AS i(id, atid)
            ORDER BY id, atid NULLS LAST
            ON CONFLICT (app_id, original_transaction_id) DO UPDATE SET
                app_transaction_id = coalesce(c.app_transaction_id, EXCLUDED.app_transaction_id)
            """,
            [appId, PostgresTextArray(ids), PostgresNullableTextArray(named.map(\.appTransactionId))])
        let shared = Array(Set(named.compactMap(\.appTransactionId)))
        if !shared.isEmpty { try group(by: .appTransactionId(only: shared), on: connection) }
        try connection.execute(
            """
            WITH incoming AS (
                SELECT coalesce(c.customer, c.original_transaction_id) AS head, max(i.at) AS at
                FROM unnest($2::text[], $3::timestamptz[]) AS i(id, at)
                JOIN apple_refund_cursor c ON c.app_id = $1 AND c.original_transaction_id = i.id
                GROUP BY 1
            )
            UPDATE apple_refund_cursor c SET queued_at = coalesce(c.queued_at, now()),
                queue_reason = CASE WHEN c.queue_reason IS NULL OR c.queue_reason = 'backfill' THEN $4
                                    ELSE c.queue_reason END,
                notified_at = greatest(c.notified_at, i.at)
            FROM incoming i
            WHERE c.app_id = $1 AND c.original_transaction_id = i.head
              AND (c.notified_at IS NULL OR i.at > c.notified_at)
            """,
            [
                appId, PostgresTextArray(ids),
                PostgresTextArray(named.map { PostgresTimestamp.format($0.signedAt) }), reason,
            ])
    }
}
