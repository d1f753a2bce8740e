import Foundation
import Postgres

/// The ledger's side of the Orders API: which orders still need asking, the `google_order` table (what Google said
/// of each order) and the backlog mark. The only SQL that writes `google_order`; the refund rows an answer changes
/// are written by ``RefundWriter``.
public struct GoogleOrderStore: Sendable {
    /// The app.
    public let appId: String
    /// Configured prices, for the estimate of a refund whose order states no amount.
    public let prices: ConfiguredPrices

    /// The store of one app.
    public init(appId: String, prices: ConfiguredPrices = ConfiguredPrices()) {
        self.appId = appId
        self.prices = prices
    }

    /// After a voided page is stored: returns the order ids whose stored refund rows still need the store's amount
    /// (never asked, pending at Google, or revoked since last asked), and drops those orders' rows of refunds without
    /// revocation until the answer puts back the ones no voided row claims; an order not asked again keeps its rows.
    /// Ids of rows without an `orderId` (keyed by purchase token) are never asked. One probe of the ledger per order
    /// serves both.
    public func settleVoided(_ orderIds: [String], on connection: PostgresConnection) throws -> [String] {
        guard !orderIds.isEmpty else { return [] }
        return try connection.transactionRetryingConflicts { connection in
            try refunds.serializeGoogleRefunds(on: connection)
            return try refunds.settleVoided(orderIds, on: connection)
        }
    }

    /// Orders storerecon knows that may have been refunded without revocation: Google subscriptions' current
    /// orders (`latestSuccessfulOrderId`, kept by the recheck) never fetched nor refunded in the ledger yet, and
    /// orders fetched before that Google had not refunded whole (one refunded in part may be refunded again), none
    /// named by a voided row waiting in the quarantine, least recently asked first.
    public func knownOrders(limit: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query(
            """
            SELECT id FROM (
                SELECT s.current_order_id AS id, NULL::timestamptz AS asked FROM subscription s
                WHERE s.app_id = $1 AND s.current_order_id LIKE 'GPA.%'
                  AND NOT EXISTS (SELECT 1 FROM google_order o WHERE o.app_id = $1 AND o.order_id = s.current_order_id)
                  AND NOT EXISTS (SELECT 1 FROM refund r WHERE r.app_id = $1 AND r.order_id = s.current_order_id)
                UNION ALL
                SELECT o.order_id, o.fetched_at FROM google_order o
                WHERE o.app_id = $1 AND o.status = 'ok' AND o.state IS DISTINCT FROM 'REFUNDED'
            ) AS known
            -- A voided row set aside (wrong types) is a revocation the ledger could not store yet: its order's
            -- refund is not one "without revocation", and waits for the quarantine's retry.
            WHERE NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.app_id = $1 AND q.job = 'google_voided'
                              AND q.resolved_at IS NULL AND q.natural_key = known.id)
            GROUP BY id
            ORDER BY min(asked) NULLS FIRST, id
            LIMIT $2
            """, [appId, limit]
        ).map { try $0.decode("id") }
    }

    /// Records ids Google would not give (404 alone, or 403); refund rows note why they have no store amount, and
    /// take the configured estimate in the sale's currency as far as it is known (``ConfiguredPrices``).
    public func mark(_ ids: [String], status: GoogleOrderStatus, on connection: PostgresConnection) throws {
        try connection.transactionRetryingConflicts { connection in
            try refunds.serializeGoogleRefunds(on: connection)
            try connection.execute(
                """
                INSERT INTO google_order (app_id, order_id, status)
                SELECT $1, id, $3 FROM unnest($2::text[]) AS i(id)
                ON CONFLICT (app_id, order_id) DO UPDATE SET status = EXCLUDED.status, fetched_at = now(),
                    fetch_count = google_order.fetch_count + 1
                """, [appId, PostgresTextArray(ids), status.rawValue])
            let note: AmountNote = status == .notFound ? .orderNotFound : .noPermission
            try refunds.estimateRefused(ids, note: note, on: connection)
            // An order Google does not know will put back no refund it set aside; one refused for want of
            // permission is asked again, and its answer puts them back.
            if status == .notFound { try refunds.restoreRecorded(ids, on: connection) }
        }
    }

    /// Takes the app's lock of Google refund writers for the rest of the transaction
    /// (``RefundWriter/serializeGoogleRefunds(on:)``).
    public func serialize(on connection: PostgresConnection) throws {
        try refunds.serializeGoogleRefunds(on: connection)
    }

    /// The writer of the app's refund rows, which an order's answer (or its refusal) changes.
    var refunds: RefundWriter { RefundLedger(appId: appId, prices: prices).writer }
}
