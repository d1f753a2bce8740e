import Postgres

extension SubscriptionLedger {
    /// Adds the tokens queued in `recheck_request` that storerecon does not know to `subscription` (state `unknown`,
    /// not entitled until the store says), so the recheck asks about them. A request without a product cannot be added
    /// (`product_id` is required) and stays queued. Returns (added, waiting without a product).
    public static func adoptQueued(app: String, on connection: PostgresConnection) throws -> (Int, Int) {
        let row = try connection.query(
            """
            WITH unknown AS (
                SELECT q.purchase_id, q.product_id FROM recheck_request q
                WHERE q.app_id = $1
                  AND NOT EXISTS (SELECT 1 FROM subscription s WHERE s.app_id = $1 AND s.store_id = q.purchase_id)
            ), added AS (
                INSERT INTO subscription (app_id, store_id, product_id, state, entitled)
                SELECT $1, purchase_id, product_id, 'unknown', false FROM unknown WHERE product_id IS NOT NULL
                ON CONFLICT (app_id, store_id) DO NOTHING
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM added)::int AS added,
                   (SELECT count(*) FROM unknown WHERE product_id IS NULL)::int AS waiting
            """, [app])[0]
        return (try row.decode("added"), try row.decode("waiting"))
    }
}
