import Foundation
import Ledger
import Logging
import Postgres

/// Apple's refund-history cursors, one per customer (`apple_refund_cursor`), and the backfill that queues them
/// (`apple_refund_backfill`): the only SQL on those tables. Which customers are queued, claimed, swept and read to
/// which `revision`. Refunds and reversals are written by the ledger (``RefundLedger``).
struct AppleRefundCursorStore: Sendable {
    let appId: String

    /// Queues customers for a refund-history call (a customer already queued keeps its place). A customer may be
    /// listed more than once (two refunds on one notification page).
    func queue(_ originalTransactionIds: [String], reason: String, on connection: PostgresConnection) throws {
        guard !originalTransactionIds.isEmpty else { return }
        try connection.execute(
            """
            INSERT INTO apple_refund_cursor (app_id, original_transaction_id, queued_at, queue_reason)
            SELECT $1, id, now(), $3 FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS i(id)) AS d
            ON CONFLICT (app_id, original_transaction_id) DO UPDATE SET
                queued_at = coalesce(apple_refund_cursor.queued_at, now()),
                queue_reason = coalesce(apple_refund_cursor.queue_reason, EXCLUDED.queue_reason)
            """, [appId, PostgresTextArray(originalTransactionIds), reason])
    }
}

/// Reading customers: the claim, the revision a chain has reached, and the end of a read.
extension AppleRefundCursorStore {
    /// The stored `revision` of a customer's refund history, if it was read before.
    func revision(of originalTransactionId: String, on connection: PostgresConnection) throws -> String? {
        try connection.query(
            "SELECT revision FROM apple_refund_cursor WHERE app_id = $1 AND original_transaction_id = $2",
            [appId, originalTransactionId]
        ).first.flatMap { try $0.decodeIfPresent("revision", as: String.self) }
    }

    /// The next customer a claim of `kind` would take, reserving nothing (a dry run), skipping `seen`.
    func peek(
        _ kind: ClaimKind, excluding seen: [String], recheckSeconds: Double, on connection: PostgresConnection
    ) throws -> (String, String?)? {
        let rows = try connection.query(
            """
            SELECT original_transaction_id, revision FROM apple_refund_cursor
            WHERE app_id = $1 AND customer IS NULL AND \(kind.condition(recheck: "$3"))
              AND original_transaction_id <> ALL ($2::text[])
            ORDER BY queued_at, last_checked_at NULLS FIRST LIMIT 1
            """, [appId, PostgresTextArray(seen)] + kind.parameters(recheckSeconds))
        guard let row = rows.first else { return nil }
        return (try row.decode("original_transaction_id"), try row.decodeIfPresent("revision"))
    }

    /// Claims the next customer of `kind` for `worker`: `FOR UPDATE SKIP LOCKED` picks a row no other process is
    /// claiming, and the lease keeps it reserved while its pages are read and committed one by one.
    func claim(
        _ kind: ClaimKind, worker: String, leaseSeconds: Int, notCheckedSince: Date?, recheckSeconds: Double,
        on connection: PostgresConnection
    ) throws -> (String, String?)? {
        let rows = try connection.query(
            """
            UPDATE apple_refund_cursor c SET claimed_until = now() + make_interval(secs => $3), claimed_by = $2,
                claimed_backend = pg_backend_pid(), claimed_at = now()
            WHERE (c.app_id, c.original_transaction_id) = (
                SELECT app_id, original_transaction_id FROM apple_refund_cursor
                WHERE app_id = $1 AND customer IS NULL
                  AND (claimed_until IS NULL OR claimed_until < now()
                       OR (\(ClaimLiveness.claimerGone(claimedAt: "claimed_at", backend: "claimed_backend"))))
                  AND \(kind.condition(recheck: "$5"))
                  AND ($4::timestamptz IS NULL OR last_checked_at IS NULL OR last_checked_at < $4)
                ORDER BY queued_at, last_checked_at NULLS FIRST
                LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING c.original_transaction_id, c.revision
            """, [appId, worker, leaseSeconds, notCheckedSince] + kind.parameters(recheckSeconds))
        guard let row = rows.first else { return nil }
        return (try row.decode("original_transaction_id"), try row.decodeIfPresent("revision"))
    }

    /// Saves how far a customer's chain has read (a page with more after it), and renews the lease when this
    /// session holds it: a long chain, paced by Apple's throttling, must not outlast its lease while being read and
    /// be claimed by another reader, which would ask for the same pages again.
    func advance(_ customer: String, to revision: String?, leaseSeconds: Int, on connection: PostgresConnection)
        throws
    {
        try connection.execute(
            """
            UPDATE apple_refund_cursor SET revision = $3,
                claimed_until = CASE WHEN claimed_backend = pg_backend_pid() AND claimed_until IS NOT NULL
                                     THEN now() + make_interval(secs => $4) ELSE claimed_until END
            WHERE app_id = $1 AND original_transaction_id = $2
            """, [appId, customer, revision, leaseSeconds])
    }

    /// Marks a customer read: new revision, checked now, out of the queue, lease released.
    func finish(_ customer: String, revision: String?, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE apple_refund_cursor SET revision = $3, last_checked_at = now(), read_failed_at = NULL,
                   queued_at = NULL, queue_reason = NULL, claimed_until = NULL, claimed_by = NULL
            WHERE app_id = $1 AND original_transaction_id = $2
            """, [appId, customer, revision])
    }

    /// Gives a customer back without marking it read: `last_checked_at` keeps this run from claiming it again, and
    /// `read_failed_at` has the next sweep and `backfill apple-refunds --all` take it as not read.
    func release(_ customer: String, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE apple_refund_cursor SET claimed_until = NULL, claimed_by = NULL, last_checked_at = now(),
                   read_failed_at = now()
            WHERE app_id = $1 AND original_transaction_id = $2
            """, [appId, customer])
    }
}
