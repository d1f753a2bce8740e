import Foundation
import Postgres

/// Reversals (Apple `REFUND_REVERSED`) and the ledger's look-ups by key.
extension RefundLedger {
    /// Marks refunds reversed (`REFUND_REVERSED`); never deletes them. The subscription is flagged for a recheck,
    /// since the reversal may restore access.
    public func markReversed(transactionIds: [String], at dates: [Date], on connection: PostgresConnection) throws
        -> Int
    {
        guard !transactionIds.isEmpty else { return 0 }
        try connection.execute(
            """
            INSERT INTO apple_refund_reversal (app_id, transaction_id, reversed_at)
            SELECT $1, order_id, reversed_at FROM unnest($2::text[], $3::timestamptz[]) AS i(order_id, reversed_at)
            ON CONFLICT (app_id, transaction_id) DO NOTHING
            """,
            [appId, PostgresTextArray(transactionIds), PostgresTextArray(dates.map(PostgresTimestamp.format))])
        let subscriptions = try writer.markReversed(transactionIds: transactionIds, at: dates, on: connection)
        try SubscriptionLedger.flag(
            Array(Set(subscriptions.compactMap { $0 })).sorted(), reason: "refund_reversed", on: connection)
        return subscriptions.count
    }

    /// Whether the ledger holds a whole-order refund of `orderId`.
    public func hasWholeRefund(orderId: String, on connection: PostgresConnection) throws -> Bool {
        !(try connection.query(
            "SELECT 1 AS one FROM refund WHERE app_id = $1 AND order_id = $2 AND part_key = ''", [appId, orderId]
        )
        .isEmpty)
    }
}
