import Postgres

/// The one writer of `subscription` and `subscription_transition`: what a refund or a reversal does to a subscription
/// (here), what a recheck's status answer says (``SubscriptionLedger/claim(_:on:)`` and its siblings) and what an
/// import brings (``SubscriptionLedger/copyImported(on:_:)``). Other modules read these tables and call this type to
/// change them.
public enum SubscriptionLedger {
    /// Applies refunds of `(storeId, orderId)` pairs of app `app` to their subscriptions. When the refunded order is
    /// the subscription's current one, entitlement ends at once (state `revoked`, logged as a transition); when it is
    /// an older order, or the current one is not known yet, the subscription is flagged so the recheck job asks the
    /// store. A refund already reversed when it is stored does nothing (a reversal that comes later flags the
    /// subscription instead), so the state does not depend on which notification was read first. Idempotent.
    /// - Parameter source: the job, for the transition log (`google_voided`, `apple_refunds`).
    static func applyRefunds(
        app: String, storeIds: [String], orderIds: [String], source: String, runId: Int64?,
        on connection: PostgresConnection
    ) throws {
        guard !storeIds.isEmpty else { return }
        try connection.execute(
            """
            WITH hit AS (
                SELECT DISTINCT ON (s.id) s.id, s.state, i.order_id
                FROM unnest($2::text[], $3::text[]) AS i(store_id, order_id)
                JOIN subscription s ON s.app_id = $1 AND s.store_id = i.store_id
                -- A refund whose reversal came first (Apple REFUND_REVERSED) ends nothing.
                WHERE NOT EXISTS (SELECT 1 FROM refund r WHERE r.app_id = $1 AND r.order_id = i.order_id
                                  AND r.reversed_at IS NOT NULL)
                ORDER BY s.id, (s.current_order_id = i.order_id) DESC
            ), revoked AS (
                -- Whether the order is current is asked of the row as updated, not of `hit` (this statement's
                -- snapshot): a renewal a recheck committed while this statement waited for the row is not revoked by
                -- the refund of the order it replaced; that refund flags it instead. An UPDATE tests a row as the
                -- snapshot sees it before it locks the row, and again in its newest version: so the flag also takes
                -- a row of the current order that the revocation left alone while still entitled (the snapshot's
                -- view of a renewal committed meanwhile), and its newest version then says whether its order is
                -- another.
                UPDATE subscription s SET entitled = false, state = 'revoked', updated_at = now()
                FROM hit WHERE s.id = hit.id AND s.current_order_id = hit.order_id
                  AND (s.entitled OR s.state <> 'revoked')
                RETURNING s.id, hit.state AS old_state, hit.order_id
            ), flagged AS (
                UPDATE subscription s SET flagged_at = now(), flag_reason = $5, updated_at = now()
                -- A row only watched until the store settles a renewal (`entitled_past_expiry`) is flagged anew:
                -- the refund makes it due on the next run, not after the watch interval.
                FROM hit WHERE s.id = hit.id
                  AND (s.flagged_at IS NULL OR s.flag_reason = 'entitled_past_expiry')
                  AND (s.current_order_id IS DISTINCT FROM hit.order_id
                       OR (s.id NOT IN (SELECT id FROM revoked) AND (s.entitled OR s.state <> 'revoked')))
                RETURNING s.id
            )
            INSERT INTO subscription_transition (subscription_id, old_state, new_state, classification, order_id,
                                                 source, job_run_id)
            SELECT id, old_state, 'revoked', 'revoked', order_id, $5, $4 FROM revoked
            """,
            [app, PostgresTextArray(storeIds), PostgresTextArray(orderIds), runId, source])
    }

    /// Flags subscriptions for the recheck (a refund reversed may restore access).
    static func flag(_ ids: [Int64], reason: String, on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.execute(
            """
            UPDATE subscription SET flagged_at = now(), flag_reason = $2, updated_at = now()
            WHERE id = ANY ($1::bigint[])
            """, [PostgresArray(ids), reason])
    }
}
