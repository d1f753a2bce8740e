import Foundation
import Logging
import Postgres

/// Apple's own bookkeeping beside the ledger: the queue of customers whose refund history is to be read, and the
/// reversals (`REFUND_REVERSED`). Refunds themselves are written by ``RefundLedger``.
struct AppleRefundStore: Sendable {
    let app: AppConfig

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
            """, [app.id, PostgresTextArray(originalTransactionIds), reason])
    }

    /// Marks refunds reversed (`REFUND_REVERSED`); never deletes them. The subscription is flagged for a recheck,
    /// since the reversal may restore access.
    func markReversed(transactionIds: [String], at dates: [Date], on connection: PostgresConnection) throws -> Int {
        guard !transactionIds.isEmpty else { return 0 }
        try connection.execute(
            """
            INSERT INTO apple_refund_reversal (app_id, transaction_id, reversed_at)
            SELECT $1, order_id, reversed_at FROM unnest($2::text[], $3::timestamptz[]) AS i(order_id, reversed_at)
            ON CONFLICT (app_id, transaction_id) DO NOTHING
            """,
            [app.id, PostgresTextArray(transactionIds), PostgresTextArray(dates.map(PostgresTimestamp.format))])
        let row = try connection.query(
            """
            WITH reversed AS (
                UPDATE refund r SET reversed_at = i.reversed_at
                FROM unnest($2::text[], $3::timestamptz[]) AS i(order_id, reversed_at)
                WHERE r.app_id = $1 AND r.order_id = i.order_id AND r.part_key = '' AND r.reversed_at IS NULL
                RETURNING r.subscription_id
            ), flagged AS (
                UPDATE subscription s SET flagged_at = now(), flag_reason = 'refund_reversed', updated_at = now()
                WHERE s.id IN (SELECT subscription_id FROM reversed WHERE subscription_id IS NOT NULL)
                RETURNING s.id
            )
            SELECT count(*) AS n FROM reversed
            """,
            [app.id, PostgresTextArray(transactionIds), PostgresTextArray(dates.map(PostgresTimestamp.format))])[0]
        return try row.decode("n")
    }
}
